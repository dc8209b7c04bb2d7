"""Compiled columns: the op under ``torch.compile(fullgraph=True)`` vs eager.

Every case of the op (see :mod:`opsdk.harness.variants.cases`) runs its calls through
one compiled function: results, in-place mutations and, for an op with a
backward, the inputs' gradients (see :mod:`opsdk.harness.core.training`) must equal
eager on every call, and no call after the first may compile again (static
shapes repeat; dynamic sizes change without recompiling). Compiling more than
once within the first call is Dynamo
restarting its analysis (e.g. to specialize a float), not a recompile.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounterWithBackend

from opsdk.harness import notes
from opsdk.harness.cell import Cell, CellFailure
from opsdk.harness.core import shared_trace
from opsdk.harness.core.compare import assert_same, assert_same_call
from opsdk.harness.core.host_values import taken
from opsdk.harness.core.kernel import backward, checked_kernel
from opsdk.harness.core.training import requires_grad, trainable
from opsdk.harness.core.usage import usages
from opsdk.harness.failures import as_failure
from opsdk.harness.variants.cases import Case, cases, mark_static, on_device


def run(
    cell: Cell,
    backend: str | Callable,
    *,
    layer: str,
    compile_layer: str | None = None,
    hint: str = "compare with the eager column; rerun with TORCH_LOGS=graph_code to see the graph",
    after_case: Callable[[Case], None] | None = None,
) -> None:
    """Run ``cell`` through ``backend``: a failure of the backend's compiler belongs to
    ``compile_layer`` (default ``layer``), a failure or mismatch at run time to ``layer``.
    ``after_case(case)`` runs after each case's calls; its failures name the case too.

    In a usage context, the function compiled and its calls are the context's
    (:mod:`opsdk.harness.core.usage`). A case the run's compiled columns share
    (:mod:`opsdk.harness.core.shared_trace`) runs on the shared compile first; if anything
    fails there, it runs alone and that result stands."""
    for use in usages(cell, cases(cell.op.spec, cell.shapes, cell.column, vary_from=1)):
        check = functools.partial(
            _run_calls,
            cell,
            use.eager,
            use.case,
            layer=layer,
            compile_layer=compile_layer,
            hint=hint,
            after_case=after_case,
        )
        with use.case.named(), _aliasing_is_an_error():
            if not shared_trace.passes_shared(cell, use, check):
                torch._dynamo.reset()
                # torch annotates a name; its __call__'s lookup_backend takes a callable too
                counter = CompileCounterWithBackend(backend)  # type: ignore[arg-type]
                check(use.compile(counter, cell.shapes), counter)


def _aliasing_is_an_error():
    """torch makes its custom-op aliasing check an error only where ``$CI`` is set (and
    will always, it warns): the verdict must not depend on where the harness runs."""
    import torch._functorch.config

    return torch._functorch.config.patch(error_on_custom_op_aliasing=True)


def _run_calls(
    cell: Cell, op, case: Case, compiled, counter, *, layer, compile_layer, hint, after_case
) -> None:
    """The case's calls through ``compiled``, each against eager, then ``after_case(case)``;
    a compile after the first call is a recompile."""
    compiles_after_first_call = None
    for i, call in enumerate(case.calls):
        with call.noted():
            _run_call(cell, op, compiled, case, i, call, layer, compile_layer, hint)
        if compiles_after_first_call is None:
            compiles_after_first_call = counter.frame_count
    recompiles = counter.frame_count - (compiles_after_first_call or 0)
    if recompiles:
        raise recompiled(recompiles, cell.shapes, case)
    note = taken(cell.op.spec, case)
    if note is not None:
        notes.add(note)
    if after_case is not None:
        after_case(case)


def recompiled(recompiles: int, shapes: str, case: Case) -> CellFailure:
    """The failure of a case whose calls after the first compiled ``recompiles`` times."""
    changed = "sizes changed" if shapes == "dynamic" else "only values changed"
    scalars = "; ".join(c.changed for c in case.calls if c.changed)
    changed += f" (and the harness changed {scalars})" if scalars else ""
    return CellFailure(
        "recompile",
        f"recompiled {recompiles} time(s) after the first call although {changed}; "
        "rerun with TORCH_LOGS=recompiles to see which guard failed",
    )


def _run_call(cell: Cell, op, compiled, case: Case, i: int, call, layer, compile_layer, hint):
    """Call ``i`` through ``compiled`` against the npu kernel, itself checked against the
    CPU reference on the same arguments (so a stale kernel cannot vouch for a graph)."""
    eager_call, compiled_call = on_device(call, "npu"), on_device(call, "npu")
    train = trainable(cell.op.spec)
    leaves = (requires_grad(compiled_call), requires_grad(eager_call)) if train else ([], [])
    mark_static(compiled_call, cell.shapes)
    expected, _ = checked_kernel(op, i, eager_call, on_device(call, "cpu"), case.tolerances)
    try:
        actual = compiled(*compiled_call.args, **compiled_call.kwargs)
    except Exception as err:  # noqa: BLE001 - classified into a layer below
        raise as_failure(err, default_layer=layer, compile_layer=compile_layer) from err
    assert_same_call(
        i,
        actual,
        expected,
        compiled_call,
        eager_call,
        layer=layer,
        hint=hint,
        writes_hint="an in-place write was lost: the schema must mark every written input "
        "Tensor(a!)",
        tolerances=case.tolerances,
        after="the compiled call",
    )
    if train:  # the backward graph, compiled by the same backend
        assert_same(
            backward(actual, leaves[0], i, layer=layer, compile_layer=compile_layer),
            backward(expected, leaves[1], i, layer="autograd"),
            what=f"call {i}: gradients of the inputs",
            layer=layer,
            hint=hint,
            tolerances=case.tolerances,
        )
