"""The cells that run together, so a column can leave to another what both would do.

Within one run (``opsdk check``, a pytest session): the compiled columns share
each case's trace (:mod:`opsdk.harness.core.shared_trace`), and ``opcheck`` leaves
AOT dispatch to ``aot_eager`` when that column runs too
(:mod:`opsdk.harness.columns.opcheck`). A run also remembers how each op did alone in
each column and shape mode, so a usage context's failure can say whether the op alone
passes (:mod:`opsdk.harness.variants.contexts`).
Outside a run (one :func:`opsdk.harness.run_cell` on its own) every column does
all of its own work. Entering a run imports nothing: eager cells of a run start
without Dynamo.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from opsdk.harness import columns
from opsdk.harness.cell import Result


@dataclass
class _Run:
    columns: frozenset[str]
    on_end: list[Callable[[], None]] = field(default_factory=list)
    alone: dict[tuple, Result] = field(default_factory=dict)


_run: _Run | None = None


@contextlib.contextmanager
def together(column_names: Iterable[str]) -> Iterator[None]:
    """Cells of the columns ``column_names`` run together until the context ends."""
    global _run
    previous, _run = _run, _Run(frozenset(column_names))
    try:
        yield
    finally:
        ended, _run = _run, previous
        for callback in ended.on_end:
            callback()


def includes(column: str) -> bool:
    """Whether the current run has cells of ``column``."""
    return _run is not None and column in _run.columns


def left_to(name: str) -> tuple[str, ...]:
    """The columns of the current run that the column ``name`` leaves part of its checks
    to (``Column.leaves_to``): its result depends on them being in the run."""
    return tuple(c for c in columns.column(name).leaves_to if includes(c))


def compiled_columns() -> tuple[str, ...]:
    """The run's compiled columns, in matrix order (none outside a run)."""
    return tuple(c for c in columns.compiling() if includes(c))


def at_end(callback: Callable[[], None]) -> None:
    """Call ``callback`` once when the current run ends, however often it is asked."""
    if _run is None:
        raise RuntimeError("at_end() outside a run: call it inside one_run()")
    if callback not in _run.on_end:
        _run.on_end.append(callback)


def record(result: Result) -> None:
    """Remember the result of an op alone (a cell without a context) in the current run."""
    if _run is not None:
        _run.alone[result.op, result.column, result.profile, result.shapes] = result


def recorded(op: str, column: str, profile: str | None, shapes: str) -> Result | None:
    """The recorded result of ``op`` alone in that column, profile and shape mode, if any."""
    return None if _run is None else _run.alone.get((op, column, profile, shapes))
