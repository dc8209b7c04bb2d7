"""Column ``eager``: the npu kernel against the CPU reference, call by call."""

from __future__ import annotations

from opsdk.harness.cell import Cell, CellFailure
from opsdk.harness.core.compare import assert_same
from opsdk.harness.core.kernel import backward, checked_kernel
from opsdk.harness.core.training import requires_grad, trainable
from opsdk.harness.variants.cases import Call, Case, cases, on_device, tensor_bytes, tensors_of


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
    leaves = (requires_grad(on_npu), requires_grad(on_cpu)) if train else ([], [])
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
