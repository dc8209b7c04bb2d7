"""The graphs behind a ``ge`` or ``npugraph_ex`` cell, handed to whoever draws them.

While a receiver listens (``opsdk check --report``, ``opsdk graph``: see
:mod:`opsdk.report.graphs`), these columns collect the concrete graphs TorchAir and
npugraph_ex build or first run in a cell and, when the cell ends, hand over one: the
last forward graph of the case that failed (run alone: a case that fails on a trace
shared with other columns runs again on its own, and that run's verdict stands), or
for a pass the last of the first case. With nobody listening nothing is hooked. What a receiver
does never changes the cell's verdict.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from opsdk.errors import SetupError
from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.failures import chain

__all__ = [
    "COLUMNS",
    "CellGraphs",
    "case_done",
    "collected",
    "hand_over_pass",
    "listening",
    "paused",
    "received_by",
]

COLUMNS = ("ge", "npugraph_ex", "fusion")  # the columns that hand their graphs over


@dataclass(frozen=True)
class CellGraphs:
    """One cell's graphs and what a picture of them marks."""

    op: str  # the op's qualified name, as results name it
    label: str  # the cell within its op (``ge-dynamic/view``)
    column: str
    failed: bool
    fx: Any  # the post-AOT FX GraphModule the backend lowered (after its own passes)
    ge: Any | None  # the GE GraphDef TorchAir built for the engine; None for npugraph_ex
    op_nodes: frozenset[str]  # FX nodes that call the op (itself, or auto-functionalized)
    op_types: frozenset[str]  # GE node types of the op's IR
    symbols: dict[str, str] = field(default_factory=dict)  # GE Data -> its symbolic scalars
    marks: dict[str, str] = field(default_factory=dict)  # node -> what the failed rule says
    fx_before: Any | None = None  # fusion: the FX graph the pattern pass was handed (fx: after)


Receiver = Callable[[CellGraphs], None]
_receivers: list[Receiver] = []


@contextlib.contextmanager
def received_by(receiver: Receiver) -> Iterator[None]:
    """While active, every cell's graphs go to ``receiver`` too."""
    _receivers.append(receiver)
    try:
        yield
    finally:
        _receivers.remove(receiver)


def listening() -> bool:
    return bool(_receivers)


@dataclass
class _Collector:
    graphs: list = field(default_factory=list)
    ends: list[int] = field(default_factory=list)  # len(graphs) as each case passed
    paused: bool = False

    def see(self, graph) -> None:
        """Note ``graph``, unless paused, seen before, or a backward graph (one AOT
        autograd compiles while autograd runs a backward): pictures are of forward graphs."""
        import torch

        backward = torch._C._current_graph_task_id() != -1
        if not (self.paused or backward or any(g is graph for g in self.graphs)):
            self.graphs.append(graph)

    def chosen(self, failed: bool):
        """The last graph of the failing case, or of the first case for a pass."""
        if failed:
            case = self.graphs[self.ends[-1] :] if self.ends else self.graphs
        else:
            case = self.graphs[: self.ends[0]] if self.ends else self.graphs
        return case[-1] if case else None


_active: _Collector | None = None


def case_done() -> None:
    """A case of the running cell passed: the graphs seen so far are its and earlier ones'."""
    if _active is not None:
        _active.ends.append(len(_active.graphs))


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Graphs built in the block are not the cell's (npugraph_ex's diagnosis ladder)."""
    if _active is None:
        yield
        return
    _active.paused = True
    try:
        yield
    finally:
        _active.paused = False


@contextlib.contextmanager
def collected(cell: Cell) -> Iterator[None]:
    """Collect the cell's graphs while the block runs, and hand one over as it ends,
    passed or failed (not when it skips or cannot run here)."""
    global _active
    if not _receivers:
        yield
        return
    from opsdk._runtime import patches

    seen = patches.ge_graphs_seen if cell.column == "ge" else patches.npugraph_ex_graphs_seen
    previous, _active = _active, _Collector()
    collector = _active
    try:
        with seen(collector.see):
            yield
    except (CellSkipped, SetupError):
        raise
    except Exception as err:
        _hand_over(cell, collector, err)
        raise
    else:
        _hand_over(cell, collector, None)
    finally:
        _active = previous


def hand_over_pass(cell: Cell, run, error: Exception | None) -> None:
    """A ``fusion`` cell's graphs: ``run`` (a :class:`opsdk.harness.pattern_pass.PassRun`,
    the pass of the failing call, or of the first for a pass), before and after the pass."""
    if not _receivers or run is None:
        return

    def graphs() -> CellGraphs:
        return CellGraphs(
            op=cell.op.name,
            label=cell.label,
            column=cell.column,
            failed=error is not None,
            fx=run.after,
            ge=None,
            op_nodes=_op_nodes(cell, run.after),
            op_types=frozenset(),
            fx_before=run.before,
        )

    _give(graphs)


def _hand_over(cell: Cell, collector: _Collector, error: Exception | None) -> None:
    _give(lambda: _graphs(cell, collector, error))


def _give(make: Callable[[], CellGraphs | None]) -> None:
    """Give the receivers the cell's graphs; a problem doing so is a warning of the cell."""
    try:
        graphs = make()
        if graphs is None:
            return
        for receiver in list(_receivers):
            receiver(graphs)
    except Exception as err:  # noqa: BLE001 - pictures never change a verdict
        warnings.warn(f"opsdk: the graphs of this cell were not drawn: {err!r}", stacklevel=1)


def _graphs(cell: Cell, collector: _Collector, error: Exception | None) -> CellGraphs | None:
    concrete = collector.chosen(error is not None)
    fx = getattr(concrete, "fx_graph", None)
    if fx is None:  # nothing compiled before the case failed (e.g. its kernel raised)
        return None
    failures = [e for e in chain(error) if isinstance(e, CellFailure)] if error else []
    marks = {k: v for f in reversed(failures) for k, v in f.marks.items()}
    ge_graph = concrete.graph if cell.column == "ge" else None
    return CellGraphs(
        op=cell.op.name,
        label=cell.label,
        column=cell.column,
        failed=error is not None,
        fx=fx,
        ge=ge_graph.model.graph[0] if ge_graph is not None else None,
        op_nodes=_op_nodes(cell, fx),
        op_types=_op_types(cell) if ge_graph is not None else frozenset(),
        symbols=_symbols(ge_graph, fx) if ge_graph is not None else {},
        marks=marks,
    )


def _op_nodes(cell: Cell, fx) -> frozenset[str]:
    from opsdk.harness.torchair_graphs import op_arguments  # torch: the reports load without

    spec = cell.op.spec
    return frozenset(
        n.name
        for n in fx.graph.nodes
        if n.op == "call_function" and op_arguments(n, spec) is not None
    )


def _op_types(cell: Cell) -> frozenset[str]:
    from opsdk._runtime import irdef

    return frozenset(ir.op_type for ir in irdef.for_op(cell.op.spec.qualname))


def _symbols(ge_graph, fx) -> dict[str, str]:
    """Each GE ``Data`` that carries symbolic scalars (host inputs): their symbols."""
    from opsdk.harness.torchair_graphs import SYM_DTYPES, fx_inputs

    placeholders = [n for n in fx.graph.nodes if n.op == "placeholder"]
    found = {}
    for data in (op for op in ge_graph.op if op.type == "Data"):
        values = [placeholders[i].meta.get("val") for i in fx_inputs(ge_graph, data)]
        symbols = [str(v) for v in values if type(v) in SYM_DTYPES]
        if symbols:
            found[data.name] = ", ".join(symbols)
    return found
