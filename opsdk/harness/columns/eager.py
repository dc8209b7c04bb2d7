"""Column ``eager``: the npu kernel against the CPU reference, call by call."""

from __future__ import annotations

from opsdk.harness.cell import Cell, CellFailure
from opsdk.harness.columns import layout
from opsdk.harness.columns._training import gradients, requires_grad, trainable
from opsdk.harness.columns.compare import assert_same, assert_same_call
from opsdk.harness.failures import as_failure, kernel_failure
from opsdk.harness.variants.cases import Call, Case, cases, on_device, tensor_bytes, tensors_of

HINT = "fix the npu kernel in kernels.py (the CPU reference is the oracle)"


def run_op(op, call: Call, *, layer: str):
    """Call ``op`` and return its outputs; an error becomes a CellFailure in ``layer``,
    naming the kernel (npu or CPU reference, by the call's device) and where it raised."""
    device = next((t.device.type for t in tensors_of([call.args, call.kwargs])), None)
    try:
        out = op(*call.args, **call.kwargs)
    except Exception as err:  # noqa: BLE001 - every kernel error is a finding
        raise kernel_failure(err, device, layer=layer) from err
    return out


def backward(outputs, leaves, index: int, *, layer: str, compile_layer: str | None = None):
    """The training step's gradients (see :mod:`opsdk.harness.columns._training`); an error in
    the backward becomes a CellFailure in ``layer``."""
    try:
        return gradients(outputs, leaves, index)
    except Exception as err:  # noqa: BLE001 - every backward error is a finding
        raise as_failure(err, default_layer=layer, compile_layer=compile_layer) from err


def run(cell: Cell, dump_dir=None) -> None:
    op, spec = cell.op.overload(), cell.op.spec
    train = trainable(spec)
    unwritten = {a.name for a in spec.mutated_args}  # until a call changes them
    calls = 0
    for case in cases(spec, cell.shapes, cell.column, vary_from=1):
        with case.named():
            kept = None  # the previous call's outputs, and their bytes then
            for i, call in enumerate(case.calls):
                with call.noted():
                    actual, on_cpu = _run_call(op, case, i, call, train)
                    _check_kept(kept, i)
                    kept = (actual, _snapshot(actual))
                unwritten -= _changed(spec, call, on_cpu, unwritten)
                calls += 1
    if unwritten and calls:
        _never_written(spec, sorted(unwritten), calls)


def _changed(spec, before: Call, after: Call, names: set[str]) -> set[str]:
    """Which of the arguments ``names`` the reference's call ``after`` (a copy of
    ``before``) changed."""
    was, now = spec.by_name(before.args, before.kwargs), spec.by_name(after.args, after.kwargs)
    return {n for n in names if n in was and _snapshot(was[n]) != _snapshot(now[n])}


def _never_written(spec, names: list[str], calls: int) -> None:
    """The schema says the op writes ``names`` (``Tensor(a!)``), no call changed them: a
    reference that writes nothing passes every comparison of an in-place op."""
    shown = ", ".join(repr(n) for n in names)
    raise CellFailure(
        "eager",
        f"the schema says {spec.qualname} writes {shown} in place, but none of its {calls} "
        "calls changed it: write the result into it in the CPU reference (kernels.py, e.g. "
        f"{names[0]}.copy_(result)), or give specs.py inputs the op changes",
    )


def _snapshot(outputs) -> list[bytes]:
    """The outputs' bytes (bitwise: a NaN equals itself)."""
    return [tensor_bytes(t) for t in tensors_of(outputs)]


def _check_kept(kept, index: int) -> None:
    """An output belongs to its caller: the next call must not change it, as it does
    when the kernel keeps a buffer in a global and returns it again (a stale global)."""
    if kept is not None and _snapshot(kept[0]) != kept[1]:
        raise CellFailure(
            "eager",
            f"call {index} changed what call {index - 1} returned: the npu kernel reuses "
            "an output tensor across calls (kept in a global?); return a new tensor each call",
        )


def _run_call(op, case: Case, i: int, call: Call, train: bool):
    on_npu, on_cpu = on_device(call, "npu"), on_device(call, "cpu")
    leaves = (requires_grad(on_npu), requires_grad(on_cpu)) if train else None
    actual, expected = checked_kernel(op, i, on_npu, on_cpu, case.tolerances)
    if train:
        assert_same(
            backward(actual, leaves[0], i, layer="autograd"),
            backward(expected, leaves[1], i, layer="autograd"),
            what=f"call {i}: gradients of the inputs",
            layer="autograd",
            hint="the backward in autograd.py differs on npu tensors from CPU ones",
            tolerances=case.tolerances,
        )
    return actual, on_cpu


def checked_kernel(op, index: int, on_npu: Call, on_cpu: Call, tolerances):
    """Call ``index`` of the npu kernel on ``on_npu`` and of the CPU reference on
    ``on_cpu`` (copies of one call): their outputs, once they agree (outputs and input
    writes, and the written inputs' layouts: :func:`.layout.rebound`). A column that runs
    the op compiled checks the kernel this way too, so a kernel gone stale (a cached
    scalar) fails in ``eager`` wherever it runs."""
    expected = run_op(op, on_cpu, layer="eager")
    before = layout.geometry(on_npu)
    actual = run_op(op, on_npu, layer="eager")
    rebound = layout.rebound(op, before, on_npu)
    if rebound is not None:
        raise CellFailure(rebound.layer, f"call {index}: {rebound}")
    for t in tensors_of(actual):
        if t.device.type != "npu":
            raise CellFailure("eager", f"call {index}: output on {t.device}, not npu; {HINT}")
    assert_same_call(
        index,
        actual,
        expected,
        on_npu,
        on_cpu,
        layer="eager",
        hint=HINT,
        writes_hint=HINT,
        tolerances=tolerances,
    )
    return actual, expected
