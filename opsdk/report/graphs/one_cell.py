"""`opsdk graph`: the one ``ge`` or ``npugraph_ex`` cell a pattern names, run with its FX
and GE graphs drawn into a folder (SVG and PNG; text without Graphviz's ``dot``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opsdk import harness
from opsdk.errors import OpsdkError, OutputError
from opsdk.harness import graph_hook
from opsdk.harness.cell import Cell, Result
from opsdk.report.graphs.pictures import Pictures

__all__ = ["Drawn", "chosen", "draw"]


@dataclass(frozen=True)
class Drawn:
    """The cell's result, the files drawn (none: it compiled no graph) and the pictures
    the disk did not take."""

    result: Result
    paths: list[Path]
    unwritten: list[OutputError]


def chosen(package, column: str, shapes: str, pattern: str, context: str | None) -> Cell:
    """The package's cell of ``column`` and ``shapes`` (in ``context``) of the one op whose
    name contains ``pattern``; an error naming what it matches when that is not one op."""
    cells = harness.cells(package, [column], [shapes], pattern, (), [context or "none"])
    ops = sorted({c.op.name for c in cells})
    if len(ops) != 1:
        found = f"matches {', '.join(ops)}" if ops else "matches no op"
        raise OpsdkError(f"-k {pattern!r} {found} of {package.__name__}: name one op")
    [cell] = [c for c in cells if c.context == context]
    return cell


def draw(cell: Cell, out: Path) -> Drawn:
    """Run ``cell``, drawing its graphs into ``out`` (given as ``--out``)."""
    drawer = Pictures(out, every=True, png=True, flag="--out")
    drawer.forget([(cell.op.name, cell.label)])
    with graph_hook.received_by(drawer):
        result = harness.run_cell(cell)
    return Drawn(result, drawer.drawn, drawer.unwritten)
