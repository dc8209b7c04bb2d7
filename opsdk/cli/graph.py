"""`opsdk graph`: draw the FX and GE graphs of one ge or npugraph_ex cell
(:mod:`opsdk.report.graphs.one_cell`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from opsdk import _outputs
from opsdk.axes import SHAPE_MODES
from opsdk.harness.run import target
from opsdk.harness.variants import contexts

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "graph"
NEEDS_TOOLS = True


def add(commands) -> argparse.ArgumentParser:
    graph = commands.add_parser(
        NAME, help="draw the FX and GE graphs of one ge or npugraph_ex cell (SVG and PNG)"
    )
    graph.add_argument("target", help="op package directory or importable module")
    graph.add_argument(
        "-k", dest="pattern", required=True, help="the op whose name contains PATTERN"
    )
    graph.add_argument("--column", "--backend", choices=("ge", "npugraph_ex"), required=True)
    graph.add_argument("--shapes", choices=SHAPE_MODES, required=True)
    graph.add_argument("--context", choices=contexts.names(), help="the op in a usage context")
    graph.add_argument("--out", type=Path, required=True, metavar="DIR", help="write them here")
    return graph


def early(args: argparse.Namespace) -> None:
    target.findable_package(args.target)
    _outputs.check({}, {"--out": args.out})


def run(args: argparse.Namespace) -> int:
    from opsdk.report.graphs import one_cell, render

    package = target.load(args.target)
    cell = one_cell.chosen(package, args.column, args.shapes, args.pattern, args.context)
    missing = render.missing()
    if missing:
        print(f"opsdk graph: the graphs are written as text: {missing}")
    drawn = one_cell.draw(cell, args.out)
    print(drawn.result.describe())
    if drawn.unwritten:
        raise drawn.unwritten[0]
    if not drawn.paths:
        print(f"opsdk graph: {cell.id} compiled no graph to draw", file=sys.stderr)
        return 1
    for path in drawn.paths:
        print(f"wrote {path}")
    return 0
