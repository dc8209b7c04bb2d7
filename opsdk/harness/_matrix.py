"""The matrix: every op of a package through every backend column (:mod:`.columns`).

``cells`` lays out the matrix (with the package's waivers), ``run_cell`` runs
one cell and never raises: whatever goes wrong becomes a :class:`Result` naming
the layer. A cell first checks the registries for what its backend needs
(:func:`opsdk.harness.coverage.require`), so a missing piece is named, not stumbled on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from opsdk.axes import SHAPE_MODES
from opsdk.errors import SetupError, TargetError
from opsdk.harness import columns, contexts, coverage, run_scope, waivers
from opsdk.harness.failures import as_failure
from opsdk.harness.model import Cell, CellFailure, OpUnderTest, Result
from opsdk.harness.usage import NotApplicable
from opsdk.offline.patches import guard_profiling_skipped
from opsdk.runtime import spec
from opsdk.runtime.device import ensure_npu

__all__ = ["cells", "discover", "one_run", "run_cell", "run_matrix"]


def discover(package) -> list[OpUnderTest]:
    """The ops an op package declares in its ``OPS`` tuple, with parsed specs."""
    ops = getattr(package, "OPS", None)
    if not ops:
        raise TargetError(
            f"{package.__name__} declares no OPS: add OPS = (torch.ops.ns.op.default,) "
            "to its __init__.py"
        )
    return [OpUnderTest(spec.of(op), package.__name__) for op in ops]


def cells(
    package,
    backends: Iterable[str] | None = None,
    shapes: Iterable[str] = SHAPE_MODES,
    pattern: str | None = None,
    contexts: Iterable[str] | None = None,
) -> list[Cell]:
    """The matrix of the package's ops whose name contains ``pattern``, in ``backends``
    (default: every column), each compiled column also in the usage ``contexts``
    (names, ``all`` or ``none``; default: :func:`opsdk.harness.contexts.select`'s); each
    cell carries the waiver the package's opsdk-waivers.toml declares for it (checked
    against all ops)."""
    ensure_npu()
    backends = columns.names() if backends is None else tuple(backends)
    chosen = None if contexts is None else tuple(contexts)
    ops = discover(package)
    waived = waivers.load(package, ops)
    return [
        Cell(op, b, s, waivers.reason_for(waived, op, b, s, c), context=c)
        for op in ops
        if not pattern or pattern in op.name
        for b in backends
        for c in (None, *_contexts_of(op, b, chosen))
        for s in shapes
    ]


def _contexts_of(op: OpUnderTest, backend: str, chosen) -> tuple[str, ...]:
    column = columns.get(backend)
    return contexts.select(op.spec, chosen) if column is not None and column.compiles else ()


def run_cell(cell: Cell, dump_dir: Path | None = None) -> Result:
    """Run one cell; the result carries pass, or the failing layer and message, with the
    cell's waiver applied (see :mod:`opsdk.harness.waivers`). ``dump_dir`` receives the
    graphs of compiled columns that can dump them."""
    start = time.perf_counter()
    column = columns.get(cell.backend)
    status, layer, message = "pass", None, ""
    if column is None:
        status, message = "skip", f"backend {cell.backend!r} is not available in this opsdk yet"
    else:
        try:
            coverage.require(cell.op.spec, cell.backend)
            # Dynamo's guard timing proves nothing about an op (see offline.patches).
            with guard_profiling_skipped() if column.compiles else contextlib.nullcontext():
                column.run(cell, dump_dir)
        except CellFailure as failure:
            status, layer, message = "fail", failure.layer, str(failure)
        except NotApplicable as reason:  # the context does not fit the op: never a pass
            status, message = "skip", str(reason)
        except SetupError as err:  # the column cannot run here (e.g. no TorchAir)
            status, layer, message = "error", "setup", str(err)
        except Exception as err:  # noqa: BLE001 - a harness cell must never crash the run
            failure = as_failure(err, default_layer=column.error_layer)
            status, layer, message = "error", failure.layer, str(failure)
    if cell.context is not None and status in ("fail", "error") and layer != "setup":
        message = _in_context(cell, message)
    result = Result(
        cell.op.name,
        cell.backend,
        cell.shapes,
        status,
        layer,
        message,
        round(time.perf_counter() - start, 4),
        context=cell.context,
        profile=cell.profile,
    )
    if cell.context is None:
        run_scope.record(result)
    return waivers.apply(result, cell.waiver)


def _in_context(cell: Cell, message: str) -> str:
    """A context cell's failure says which context, and, when the op alone passes in the
    same column and shape mode, that only the context shows the bug."""
    alone = run_scope.recorded(cell.op.name, cell.backend, cell.profile, cell.shapes)
    if alone is None:
        alone = run_cell(dataclasses.replace(cell, context=None, waiver=None))
    where = alone.label
    verdict = (
        f"the op alone passes {where}: a bug only this context shows"
        if alone.status == "pass"
        else f"the op alone fails {where} too: fix that first"
    )
    return f"in context {cell.context} ({verdict}): {message}"


def one_run(cell_list: Iterable[Cell]) -> contextlib.AbstractContextManager:
    """While active, the cells' columns run as one run: they leave to each other what
    both would do (:mod:`opsdk.harness.run_scope`)."""
    return run_scope.one_run({cell.backend for cell in cell_list})


def run_matrix(
    cell_list: list[Cell],
    on_result: Callable[[Result], None] | None = None,
    dump_dir: Path | None = None,
    on_start: Callable[[Cell], None] | None = None,
):
    results = []
    with one_run(cell_list):
        for cell in cell_list:
            if on_start:
                on_start(cell)
            result = run_cell(cell, dump_dir)
            results.append(result)
            if on_result:
                on_result(result)
    return results
