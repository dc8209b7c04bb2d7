"""`opsdk check`: run the conformance matrix of an op package."""

from __future__ import annotations

import argparse
from pathlib import Path

from opsdk.cli import _matrix
from opsdk.cli._flags import choices_flag, csv, matrix_flags, modes_flag
from opsdk.harness import columns
from opsdk.harness.run import target
from opsdk.harness.variants import contexts, profiles

__all__ = ["NAME", "NEEDS_TOOLS", "GRAPHS", "add", "early", "run"]

NAME = "check"
NEEDS_TOOLS = True
# `--graphs`: which ge/npugraph_ex cells the reports draw the graphs of.
GRAPHS = ("failing", "all", "none")


def add(commands) -> argparse.ArgumentParser:
    check = commands.add_parser(NAME, help="run the conformance matrix of an op package")
    matrix_flags(check)
    check.add_argument("target", help="op package directory or importable module")
    choices_flag(check, "--column", columns.names(), "COLUMNS", "columns", aliases=("--backend",))
    modes_flag(check, "the graph modes the package is made for: without ge, no ge or fusion cells")
    check.add_argument(
        "--options",
        type=csv((*profiles.names(), profiles.ALL)),
        default=[],
        metavar="PROFILES",
        help="also run the columns under these TorchAir option profiles, comma-separated, "
        f"any of {', '.join(profiles.names())} or {profiles.ALL} (default: none)",
    )
    check.add_argument(
        "--contexts",
        type=csv((*contexts.names(), contexts.ALL, contexts.NONE)),
        metavar="CONTEXTS",
        help="usage contexts of the compiled columns, comma-separated, any of "
        f"{', '.join(contexts.names())}, {contexts.ALL} or {contexts.NONE} "
        "(default: view,buffer for in-place ops)",
    )
    check.add_argument(
        "--dump", type=Path, metavar="DIR", help="write each compiled graph (FX and GE) here"
    )
    check.add_argument(
        "--graphs",
        choices=GRAPHS,
        default="failing",
        help="with --report/--markdown: draw the FX and GE graphs of the failing ge and "
        "npugraph_ex cells (default), of all of them, or none",
    )
    # Where an --isolate child draws them: the parent's folder for the pictures.
    check.add_argument("--graphs-dir", type=Path, help=argparse.SUPPRESS)
    check.add_argument(
        "--last-failed", action="store_true", help="run only the cells that failed last time"
    )
    return check


def early(args: argparse.Namespace) -> None:
    target.findable_package(args.target)
    columns.asked_in_modes(args.column, args.modes)


def run(args: argparse.Namespace) -> int:
    args.column = columns.asked_in_modes(args.column, args.modes)
    return _matrix.run(args)
