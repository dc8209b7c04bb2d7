"""`opsdk coverage`: which ops have a kernel, fake, converter, IR and input specs
(:mod:`opsdk.harness.run.coverage`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from opsdk import _outputs
from opsdk.harness.run import target

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "coverage"
NEEDS_TOOLS = True


def add(commands) -> argparse.ArgumentParser:
    cov = commands.add_parser(
        NAME, help="which ops have a kernel, fake, converter, IR and input specs"
    )
    cov.add_argument("target", help="op package directory or importable module")
    cov.add_argument("--namespace", help="list every op registered in this namespace")
    cov.add_argument("--json", type=Path, metavar="FILE", help="write the table as JSON here")
    return cov


def early(args: argparse.Namespace) -> None:
    target.findable_package(args.target)
    _outputs.check({"--json": (args.json, "coverage.json")})


def run(args: argparse.Namespace) -> int:
    from opsdk import harness
    from opsdk.harness.run import coverage

    package = target.load(args.target)
    specs = [op.spec for op in harness.discover(package)]
    rows = coverage.rows(specs, args.namespace, package.__name__)
    print(coverage.table(rows))
    if args.json:
        _outputs.write("--json", args.json, coverage.json_text(rows))
        print(f"wrote {args.json}")
    return 0
