"""`opsdk ir`: export the ops' GE IR for CANN, or the aclnn API declarations CANN's build
generates from it (:mod:`opsdk.harness.exports`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from opsdk import _outputs
from opsdk.harness.run import target

__all__ = ["NAME", "NEEDS_TOOLS", "FORMATS", "add", "early", "run"]

NAME = "ir"
NEEDS_TOOLS = True
# opsdk.harness.exports.FORMATS' names, known without importing torch (--help)
FORMATS = ("msopgen", "reg_op", "opdef", "aclnn")


def add(commands) -> argparse.ArgumentParser:
    ir = commands.add_parser(
        NAME,
        help="export the ops' GE IR for CANN (msopgen JSON, REG_OP or an OpDef .cpp), or the "
        "aclnn API declarations CANN's build generates from it",
    )
    ir.add_argument("target", help="op package directory or importable module")
    ir.add_argument("--format", choices=FORMATS, default=FORMATS[0])
    ir.add_argument(
        "--out", type=Path, metavar="DIR", help="write one file per op here (default: print)"
    )
    return ir


def early(args: argparse.Namespace) -> None:
    target.findable_package(args.target)
    _outputs.check({}, {"--out": args.out})


def run(args: argparse.Namespace) -> int:
    from opsdk import harness
    from opsdk.harness import exports

    package = target.load(args.target)
    for name, text in exports.files(harness.discover(package), args.format).items():
        if args.out is None:
            print(text, end="")
            continue
        path = args.out / name
        _outputs.write("--out", path, text)
        print(f"wrote {path}")
    return 0
