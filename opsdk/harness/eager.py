"""Column ``eager``: the npu kernel against the CPU reference, call by call."""

from __future__ import annotations

from opsdk.harness.compare import assert_same
from opsdk.harness.failures import as_failure
from opsdk.harness.inputs import Call, Case, cases, on_device, tensors_of
from opsdk.harness.model import Cell, CellFailure

HINT = "fix the npu kernel in kernels.py (the CPU reference is the oracle)"


def run_op(op, call: Call, *, layer: str):
    """Call ``op`` and return its outputs; an error becomes a CellFailure in ``layer``."""
    try:
        out = op(*call.args, **call.kwargs)
    except Exception as err:  # noqa: BLE001 - every kernel error is a finding
        raise as_failure(err, default_layer=layer) from err
    return out


def run(cell: Cell) -> None:
    op, spec = cell.op.overload(), cell.op.spec
    for case in cases(spec, cell.shapes, cell.backend):
        with case.named():
            _run_case(op, case)


def _run_case(op, case: Case) -> None:
    for i, call in enumerate(case.calls):
        on_npu, on_cpu = on_device(call, "npu"), on_device(call, "cpu")
        expected = run_op(op, on_cpu, layer="eager")
        actual = run_op(op, on_npu, layer="eager")
        for t in tensors_of(actual):
            if t.device.type != "npu":
                raise CellFailure("eager", f"call {i}: output on {t.device}, not npu; {HINT}")
        assert_same(
            actual,
            expected,
            what=f"call {i}: output",
            layer="eager",
            hint=HINT,
            tolerances=case.tolerances,
        )
        assert_same(
            tensors_of([on_npu.args, on_npu.kwargs]),
            tensors_of([on_cpu.args, on_cpu.kwargs]),
            what=f"call {i}: inputs after the call (in-place writes)",
            layer="eager",
            hint=HINT,
            tolerances=case.tolerances,
        )
