"""The op's kernel call as every column makes it: the npu kernel and the CPU reference
on copies of one call, held to each other (:func:`checked_kernel`), a call whose error
is a finding in a layer (:func:`call_op`), and the training step's gradients
(:func:`backward`). Column ``eager`` is these calls alone; the other columns check the
kernel this way too, so a kernel gone wrong fails in ``eager`` wherever it runs."""

from __future__ import annotations

from opsdk.harness.cell import CellFailure
from opsdk.harness.core import layout
from opsdk.harness.core.compare import assert_same_call
from opsdk.harness.core.training import gradients
from opsdk.harness.failures import as_failure, kernel_failure
from opsdk.harness.variants.cases import Call, tensors_of

HINT = "fix the npu kernel in kernels.py (the CPU reference is the oracle)"


def call_op(op, call: Call, *, layer: str):
    """Call ``op`` and return its outputs; an error becomes a CellFailure in ``layer``,
    naming the kernel (npu or CPU reference, by the call's device) and where it raised."""
    device = next((t.device.type for t in tensors_of([call.args, call.kwargs])), None)
    try:
        out = op(*call.args, **call.kwargs)
    except Exception as err:  # noqa: BLE001 - every kernel error is a finding
        raise kernel_failure(err, device, layer=layer) from err
    return out


def backward(outputs, leaves, index: int, *, layer: str, compile_layer: str | None = None):
    """The training step's gradients (see :mod:`opsdk.harness.core.training`); an error in
    the backward becomes a CellFailure in ``layer``."""
    try:
        return gradients(outputs, leaves, index)
    except Exception as err:  # noqa: BLE001 - every backward error is a finding
        raise as_failure(err, default_layer=layer, compile_layer=compile_layer) from err


def checked_kernel(op, index: int, on_npu: Call, on_cpu: Call, tolerances):
    """Call ``index`` of the npu kernel on ``on_npu`` and of the CPU reference on
    ``on_cpu`` (copies of one call): their outputs, once they agree (outputs and input
    writes, and the written inputs' layouts: :func:`.layout.rebound`). A column that runs
    the op compiled checks the kernel this way too, so a kernel gone stale (a cached
    scalar) fails in ``eager`` wherever it runs."""
    expected = call_op(op, on_cpu, layer="eager")
    before = layout.geometry(on_npu)
    actual = call_op(op, on_npu, layer="eager")
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
