"""The matrix: every op of a package through every column (:mod:`.columns`).

``cells`` lays out the matrix (with the package's waivers), ``run_cell`` runs
one cell and never raises: whatever goes wrong becomes a :class:`Result` naming
the layer. A cell first checks the registries for what its column needs
(:func:`opsdk.harness.run.coverage.require`), so a missing piece is named, not stumbled on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from opsdk._runtime import spec
from opsdk._runtime.device import ensure_npu
from opsdk._runtime.patches import guard_profiling_skipped
from opsdk.axes import GRAPH_MODES, SHAPE_MODES
from opsdk.errors import SetupError, TargetError
from opsdk.harness import columns, notes
from opsdk.harness.cell import Cell, CellFailure, CellSkipped, OpUnderTest, Result
from opsdk.harness.core import run_scope
from opsdk.harness.failures import as_failure, raise_out_of_memory
from opsdk.harness.run import coverage, target, waivers
from opsdk.harness.run.cache import CellCache
from opsdk.harness.run.heard import Heard
from opsdk.harness.variants import contexts
from opsdk.harness.variants import profiles as _profiles

__all__ = [
    "cached",
    "cells",
    "declared_ops",
    "discover",
    "not_run",
    "one_run",
    "run_cell",
    "run_matrix",
]


def discover(package) -> list[OpUnderTest]:
    """The ops an op package declares in its ``OPS`` tuple, with parsed specs."""
    return [OpUnderTest(spec.of(op), package.__name__) for op in declared_ops(package)]


def declared_ops(package) -> list:
    """The op overloads ``package`` lists in ``OPS``. An entry that is no op overload is
    refused, naming it and what to write. So is an op listed twice, rather than run once:
    the second entry is most often a copy meant to be another op, which running it once
    would hide."""
    ops = getattr(package, "OPS", None)
    if not ops:
        raise TargetError(target.no_ops(package.__name__))
    if not isinstance(ops, (tuple, list)):
        raise TargetError(
            f"{package.__name__}.OPS is of type {type(ops).__name__}, not a tuple: write "
            "OPS = (torch.ops.ns.op.default,) (a tuple of op overloads)"
        )
    first: dict = {}  # op -> the entry that lists it
    for number, op in enumerate(ops, 1):
        entry = f"{package.__name__}.OPS entry {number}"
        if not isinstance(op, torch._ops.OpOverload):
            raise TargetError(f"{entry} is {_not_an_overload(op)}")
        if op in first:
            raise TargetError(
                f"{entry} lists {op.name()} again (entry {first[op]}): list each op once"
            )
        first[op] = number
    return list(ops)


def _not_an_overload(entry) -> str:
    """What an OPS entry that is no ``OpOverload`` is, and what to write instead."""
    if isinstance(entry, torch._ops.OpOverloadPacket):
        overload = "default" if "default" in entry.overloads() else entry.overloads()[0]
        return (
            f"the op packet torch.ops.{entry}, not one of its overloads: write "
            f"torch.ops.{entry}.{overload}"
        )
    namespace, sep, name = entry.partition("::") if isinstance(entry, str) else ("", "", "")
    example = f"torch.ops.{namespace}.{name}.default" if sep else "torch.ops.ns.op.default"
    shown = repr(entry).splitlines()[0][:60]
    return f"{shown}, of type {type(entry).__name__}: list the op overload, e.g. {example}"


def cells(
    package,
    column_names: Iterable[str] | None = None,
    shapes: Iterable[str] = SHAPE_MODES,
    pattern: str | None = None,
    profiles: Iterable[str] = (),
    contexts: Iterable[str] | None = None,
) -> list[Cell]:
    """The matrix of the package's ops whose name contains ``pattern``, in the columns
    ``column_names`` (default: every column); each op's plain cells, then its cells
    under each option profile (:mod:`opsdk.harness.variants.profiles`) in the columns
    and shape modes it applies to; each compiled column also in the usage ``contexts``
    (names, ``all`` or ``none``; default: :func:`opsdk.harness.variants.contexts.select`'s).
    Each cell carries the waiver the package's opsdk-waivers.toml declares for it
    (checked against all ops). A package made for fewer graph modes (``MODES``,
    ``opsdk new --modes``) has no cells of the others' columns."""
    ensure_npu()
    column_names = columns.names() if column_names is None else tuple(column_names)
    column_names = columns.in_modes(column_names, getattr(package, "MODES", GRAPH_MODES))
    variants = [None, *(_profiles.get(p) for p in profiles)]
    chosen = None if contexts is None else tuple(contexts)
    ops = discover(package)
    waived = waivers.load(package, ops)
    matrix = []
    for op in ops:
        if pattern and pattern not in op.name:
            continue
        for profile in variants:
            name = profile.name if profile else None
            matrix += [
                Cell(
                    op, b, s, waivers.reason_for(waived, op, b, s, name, c), context=c, profile=name
                )
                for b in column_names
                if columns.column(b).applies(op.spec)
                for c in (None, *_contexts_of(op, b, chosen))
                for s in shapes
                if s in columns.column(b).shape_modes
                if profile is None or profile.applies(b, s)
            ]
    return matrix


def _contexts_of(op: OpUnderTest, column_name: str, chosen) -> tuple[str, ...]:
    return contexts.select(op.spec, chosen) if columns.column(column_name).compiles else ()


def run_cell(cell: Cell, dump_dir: Path | None = None, cache: CellCache | None = None) -> Result:
    """Run one cell; the result carries pass, or the failing layer and message, with the
    cell's waiver applied (see :mod:`opsdk.harness.run.waivers`). ``dump_dir`` receives the
    graphs of compiled columns that can dump them. With a ``cache``, a cell whose key it
    holds is not run: its cached result is (:mod:`opsdk.harness.run.cache`).

    One pass, each decision once: cached? -> can the column judge it here? -> run it
    (its warnings and logs heard) -> say the context -> record, cache, waive."""
    result = cache.get(cell) if cache is not None else None
    if result is None:
        result = _run(cell, dump_dir, cache)
        _settle()
        if cache is not None:
            cache.put(cell, result)
    return _reported(cell, result, cache)


@functools.cache  # once per process
def _settle() -> None:
    """Once per process, after its first cell ran (outside any cell's time): its garbage
    collected and every object left frozen out of the collector's full passes. Why: that
    cell imported torch's compile stack, TorchAir and npugraph_ex, most of what the
    process will ever hold and never garbage; a full pass scans all of it again, about
    0.3 s each time on a 2-core machine, charged to whichever cell was allocating then
    (one in ten cells). Frozen objects are still freed when unreferenced."""
    gc.collect()
    gc.freeze()


def cached(cell_list: list[Cell], cache: CellCache) -> list[Result] | None:
    """The cells' results as :func:`run_cell` reports them when ``cache`` holds every one,
    else None: an op with nothing to run needs no process of its own (``--isolate``). The
    cells are looked up as one run, as :func:`run_matrix` keys them."""
    with one_run(cell_list):
        found = [cache.get(cell) for cell in cell_list]
        held = [r for r in found if r is not None]
        if len(held) < len(found):
            return None
        return [_reported(c, r, cache) for c, r in zip(cell_list, held, strict=True)]


def _reported(cell: Cell, result: Result, cache: CellCache | None) -> Result:
    """The cell's result as the run reports it: waiver applied, outcome remembered."""
    if cell.context is None:
        run_scope.record(result)  # what a context's failure compares with (harness.usage)
    result = waivers.apply(result, cell.waiver)
    if cache is not None:
        cache.remember(result)
    return result


def _run(cell: Cell, dump_dir: Path | None, cache: CellCache | None) -> Result:
    """The cell's own result, uncached and unwaived."""
    start = time.perf_counter()
    heard = Heard()  # third-party warnings and logs go with the cell, not the progress line
    with heard.warnings(), notes.collecting() as noted:
        status, layer, message = _judged(cell, dump_dir, heard)
    if cell.context is not None and status in ("fail", "error") and layer != "setup":
        message = _in_context(cell, message, cache)
    seconds = round(time.perf_counter() - start, 4)
    return cell.result(
        status, layer, message, seconds=seconds, warnings=heard.lines, notes=tuple(noted)
    )


def _judged(cell: Cell, dump_dir: Path | None, heard: Heard) -> tuple[str, str | None, str]:
    """(status, layer, message) of the cell's column on it; never raises but interrupts
    and running out of memory."""
    column = columns.column(cell.column)
    try:
        coverage.require(cell.op.spec, cell.column)  # imports TorchAir if it needs it
        idle = cell.profile and _profiles.idle_reason(
            _profiles.get(cell.profile), cell.op.spec, cell.context
        )
        if idle:
            raise CellSkipped(idle)
        # Dynamo's guard timing proves nothing about an op (see _runtime.patches), in
        # any column that compiles (fusion compiles without sharing a case's trace).
        with heard.logs(), guard_profiling_skipped():
            column.run(cell, dump_dir)
    except Exception as err:  # noqa: BLE001 - a harness cell must never crash the run
        raise_out_of_memory(err)  # the process's, not the cell's
        return _verdict(err, column)
    return "pass", None, ""


def _verdict(err: Exception, column) -> tuple[str, str | None, str]:
    """(status, layer, message) of what a column raised."""
    if isinstance(err, CellFailure):  # the op's, unless the machine's (failures.machine_failure)
        return "error" if err.layer == "setup" else "fail", err.layer, str(err)
    if isinstance(err, CellSkipped):  # e.g. a context that does not fit: never a pass
        return "skip", None, str(err)
    if isinstance(err, SetupError):  # the column cannot run here (e.g. no TorchAir)
        return "error", "setup", str(err)
    failure = as_failure(err, default_layer=column.error_layer)
    return "error", failure.layer, str(failure)


def _in_context(cell: Cell, message: str, cache: CellCache | None) -> str:
    """A context cell's failure says which context, and, when the op alone passes in the
    same column and shape mode, that only the context shows the bug."""
    alone = _alone(cell, cache)
    verdict = {
        "pass": f" (the op alone passes {alone.label}: a bug only this context shows)",
        "fail": f" (the op alone fails {alone.label} too: fix that first)",
        "error": f" (the op alone fails {alone.label} too: fix that first)",
    }.get(alone.status, "")
    return f"in context {cell.context}{verdict}: {message}"


def _alone(cell: Cell, cache: CellCache | None) -> Result:
    """How the op did alone in ``cell``'s column, profile and shape mode: as this run
    recorded it, else as the cache holds it (read even where the run serves no cached
    cell, as --last-failed's: a verdict is no cell of the matrix), else run now, once
    per run (recorded for the run's other contexts and cached, never reported)."""
    alone = run_scope.recorded(cell.op.name, cell.column, cell.profile, cell.shapes)
    if alone is not None:
        return alone
    plain = dataclasses.replace(cell, context=None, waiver=None)
    alone = cache.read(plain) if cache is not None else None
    if alone is None:
        alone = _run(plain, None, cache)
        if cache is not None:
            cache.put(plain, alone)
    run_scope.record(alone)
    return alone


def one_run(cell_list: Iterable[Cell]) -> contextlib.AbstractContextManager:
    """While active, the cells' columns run as one run: they leave to each other what
    both would do (:mod:`opsdk.harness.core.run_scope`)."""
    return run_scope.together({cell.column for cell in cell_list})


def not_run(cell: Cell, message: str = "", seconds: float = 0.0) -> Result:
    """The result of a cell an interrupted run did not reach, or aborted."""
    return cell.result("not run", None, message, seconds=seconds, waiver=cell.waiver)


def run_matrix(
    cell_list: list[Cell],
    on_result: Callable[[Result], None] | None = None,
    dump_dir: Path | None = None,
    on_start: Callable[[Cell], None] | None = None,
    stop: Callable[[], bool] | None = None,
    cache: CellCache | None = None,
) -> list[Result]:
    """Every cell's result, in order. With ``stop`` (see :mod:`opsdk.harness.run.interrupts`)
    the run ends early when it says so before a cell, or when a KeyboardInterrupt aborts
    the cell running: the cells left are ``not run``. Without it an interrupt propagates.
    With a ``cache``, cells whose inputs did not change are read from it."""
    results = []
    with one_run(cell_list):
        for cell in cell_list:
            if stop is not None and stop():
                break
            if on_start:
                on_start(cell)
            start = time.perf_counter()
            try:
                result = run_cell(cell, dump_dir, cache)
            except KeyboardInterrupt:
                if stop is None:
                    raise
                seconds = round(time.perf_counter() - start, 4)
                result = not_run(cell, f"aborted after {seconds:.1f} s by an interrupt", seconds)
            results.append(result)
            if on_result:
                on_result(result)
            if result.status == "not run":
                break
    return results + [not_run(cell) for cell in cell_list[len(results) :]]


if TYPE_CHECKING:  # mypy holds every registered column's module to its Protocol
    from opsdk.harness.columns import aot_eager, ascendc, eager, fusion, ge, npugraph_ex, opcheck

    COLUMN_MODULES: tuple[columns.ColumnModule, ...] = (eager, opcheck, ascendc, fusion)
    COMPILING_MODULES: tuple[columns.CompilingModule, ...] = (aot_eager, ge, npugraph_ex)
