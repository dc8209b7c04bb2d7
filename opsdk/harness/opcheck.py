"""Column ``opcheck``: ``torch.library.opcheck`` on npu inputs, each test in its layer.

``test_autograd_registration`` refuses devices other than CPU/CUDA, so it runs
on CPU copies of the inputs (the op's CPU kernel is its reference).
"""

from __future__ import annotations

import torch

from opsdk.errors import SpecError
from opsdk.harness.failures import first_line, implement_me
from opsdk.harness.inputs import cases, on_device
from opsdk.harness.model import Cell, CellFailure
from opsdk.spec import validate_rules

# test util -> (layer, what to do when it fails)
_UTILS = {
    "test_schema": (
        "schema",
        "the kernel's behaviour disagrees with the schema: mark every mutated input "
        "Tensor(a!) and return fresh tensors, not views of inputs",
    ),
    "test_faketensor": (
        "fake",
        "the fake function disagrees with the kernel: make fake.py return the kernel's "
        "output shapes and dtypes",
    ),
    "test_aot_dispatch_static": ("aot", "AOT autograd cannot trace the op with static shapes"),
    "test_aot_dispatch_dynamic": (
        "aot",
        "AOT autograd cannot trace the op with symbolic shapes: make fake.py SymInt-safe",
    ),
    "test_autograd_registration": (
        "autograd",
        "register autograd with torch.library.register_autograd, or make the op non-differentiable",
    ),
}
_DEVICE_UTILS = {
    "static": ("test_schema", "test_faketensor", "test_aot_dispatch_static"),
    "mark_static": ("test_schema", "test_faketensor", "test_aot_dispatch_static"),
    "dynamic": ("test_faketensor", "test_aot_dispatch_dynamic"),
}


def run(cell: Cell) -> None:
    try:
        validate_rules(cell.op.spec)
    except SpecError as err:
        raise CellFailure("schema", f"the registered schema breaks a rule: {err}") from None
    op = cell.op.overload()
    for n, case in enumerate(cases(cell.op.spec, cell.shapes, cell.backend)):
        with case.named():
            for i, call in enumerate(case.calls):
                _check(op, on_device(call, "npu"), _DEVICE_UTILS[cell.shapes], i)
                if cell.shapes == "static" and n == i == 0:
                    _check(op, on_device(call, "cpu"), ("test_autograd_registration",), i)


def _check(op, call, utils, index: int) -> None:
    results = torch.library.opcheck(
        op, tuple(call.args), call.kwargs, test_utils=utils, raise_exception=False
    )
    for util in utils:
        outcome = results[util]
        if outcome != "SUCCESS":
            layer, hint = _UTILS[util]
            todo = implement_me(outcome)
            if todo is not None:
                raise todo
            raise CellFailure(layer, f"call {index}: {util}: {first_line(outcome)}; {hint}")
