"""Column ``opcheck``: ``torch.library.opcheck`` on npu inputs, each test in its layer.

opcheck's AOT dispatch tests (``test_aot_dispatch_static``/``_dynamic``) trace the
op with AOT Autograd, nop compilers, the min-cut partitioner and input mutations
kept, and compare with eager: what the ``aot_eager`` column does on the same
cases, behind Dynamo as users compile. When ``aot_eager`` is in the same run
(:mod:`opsdk.harness.core.run_scope`) those two tests are left to it, and an AOT
failure shows in that column (layer ``aot``); run alone, opcheck runs them too.

``test_autograd_registration`` refuses devices other than CPU/CUDA, so it runs
on CPU copies of the inputs (the op's CPU kernel is its reference). An op with
a backward also gets ``torch.autograd.gradcheck`` there, in float64: the other
columns compare gradients between devices and backends, this one checks the
formula itself against finite differences.

Like ``eager``, opcheck may change an argument between calls without recompiling: a
dimension argument (``dim``, ``axis``) moves to the case's other dims (or its declared
values) on later calls, a new input signature for opcheck's tests (a reduction's output
shape follows it). On such a call the npu kernel is also checked against the CPU
reference first (layer ``eager``), so a kernel that ignores the dim cannot pass here.
"""

from __future__ import annotations

import torch
from torch._library import simple_registry

from opsdk._runtime import spec
from opsdk._runtime.spec import validate_rules
from opsdk.errors import SpecError
from opsdk.harness.cell import Cell, CellFailure
from opsdk.harness.core import layout, run_scope
from opsdk.harness.core.kernel import checked_kernel
from opsdk.harness.core.training import requires_grad, trainable
from opsdk.harness.failures import first_line, implement_me, kernel_failure, raised_at
from opsdk.harness.variants.cases import (
    Call,
    cases,
    map_tensors,
    on_device,
    tensor_bytes,
    tensors_of,
)

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
_AOT_DISPATCH = ("test_aot_dispatch_static", "test_aot_dispatch_dynamic")
_DEVICE_UTILS = {
    "static": ("test_schema", "test_faketensor", "test_aot_dispatch_static"),
    "mark_static": ("test_schema", "test_faketensor", "test_aot_dispatch_static"),
    "dynamic": ("test_faketensor", "test_aot_dispatch_dynamic"),
}


def run(cell: Cell, dump_dir=None) -> None:
    try:
        validate_rules(cell.op.spec)
    except SpecError as err:
        raise CellFailure("schema", f"the registered schema breaks a rule: {err}") from None
    op = cell.op.overload()
    utils = _DEVICE_UTILS[cell.shapes]
    if "aot_eager" in run_scope.left_to(cell.column):
        utils = tuple(u for u in utils if u not in _AOT_DISPATCH)
    for n, case in enumerate(cases(cell.op.spec, cell.shapes, cell.column, vary_from=1)):
        with case.named():
            for i, call in _signature_calls(case.calls, cell.shapes):
                with call.noted():
                    if call.moves_dim:
                        npu, cpu = on_device(call, "npu"), on_device(call, "cpu")
                        checked_kernel(op, i, npu, cpu, case.tolerances)
                    _check(op, call, "npu", utils, i)
                if cell.shapes == "static" and n == i == 0:
                    _check(op, call, "cpu", ("test_autograd_registration",), i)
                    if trainable(cell.op.spec):
                        _gradcheck(op, call)


def _signature_calls(calls: list, shapes: str) -> list[tuple[int, Call]]:
    """The calls opcheck needs, with their indices: its tests judge the registration for
    an input signature (dtypes, sizes, layout, the dims it computes along), not for
    values. Outside ``dynamic`` a case's calls share sizes, so the first call stands for
    those that differ only in values, and a call that moves a dim runs too; each
    ``dynamic`` call has sizes of its own, so each runs."""
    return [
        (i, call) for i, call in enumerate(calls) if shapes == "dynamic" or i == 0 or call.moves_dim
    ]


# opcheck has no notion of mark_static: that cell runs the static cell's tests on the
# same inputs. Outcomes are kept per op, tests and input values, so within one process
# the second cell reads them instead of tracing AOT Autograd again.
_outcomes: dict[tuple, dict] = {}


def _fingerprint(value):
    """``value`` with each tensor replaced by what opcheck's outcome depends on: dtype,
    geometry, device, autograd flag and bytes."""
    if isinstance(value, torch.Tensor):
        return (
            value.dtype,
            tuple(value.shape),
            value.stride(),
            value.storage_offset(),
            value.device.type,
            value.requires_grad,
            tensor_bytes(value),
        )
    if isinstance(value, (list, tuple)):
        return (type(value), *map(_fingerprint, value))
    if isinstance(value, dict):
        return tuple((k, _fingerprint(v)) for k, v in sorted(value.items()))
    return (type(value), repr(value))


def _check(op, call: Call, device: str, utils, index) -> None:
    """opcheck's ``utils`` on ``call`` moved to ``device``; a failing test is reported in
    its layer, unless the kernel itself raises on these inputs (layer ``eager``: the
    tests merely ran it first) or an output's layout breaks the contract (:mod:`.layout`)."""
    on = on_device(call, device)
    key = (op, utils, _fingerprint([on.args, on.kwargs]))
    results = _outcomes.get(key)
    if results is None:
        results = _outcomes[key] = torch.library.opcheck(
            op, tuple(on.args), on.kwargs, test_utils=utils, raise_exception=False
        )
    for util in utils:
        outcome = results[util]
        if outcome != "SUCCESS":
            raise _failure(op, call, device, util, outcome, index)
    if "test_faketensor" in utils:
        _fake_returns(op, on, index)


def _fake_returns(op, call: Call, index) -> None:
    """A fake function returning None for the op's one Tensor. opcheck's
    ``test_faketensor`` compares the fake's outputs with the kernel's only when the fake
    returns something (torch's CrossRefFakeMode skips None), so such a fake passes it and
    every compiled column fails in AOT instead, without naming the fake. (None for
    several returns or a list fails the test itself.)"""
    if [r.type for r in spec.of(op).returns] != ["Tensor"]:
        return
    if layout.fake_outputs(op, call) is None:
        fake = simple_registry.singleton.find(op.name()).fake_impl.kernel
        at = f" registered at {fake.source}" if fake is not None else ""
        raise CellFailure(
            "fake",
            f"call {index}: the fake function{at} returned None where the schema returns a "
            "Tensor: make it return what the kernel does, a tensor of the output's shape "
            "and dtype (opsdk.meta helps)",
        )


def _failure(op, call: Call, device: str, util: str, outcome, index) -> CellFailure:
    """What a failing test ``util`` found, in the layer of the fault: opcheck's tests run
    the kernel too, so the kernel runs alone on fresh inputs first."""
    todo = implement_me(outcome)
    if todo is not None:
        return todo
    fresh = on_device(call, device)
    try:
        with torch.no_grad():
            out = op(*fresh.args, **fresh.kwargs)
    except Exception as err:  # noqa: BLE001 - the kernel's own error, whatever it is
        failure = kernel_failure(err, device)
        return CellFailure(failure.layer, f"call {index}: {failure}")
    if "Stride mismatch" in str(outcome):
        mismatch = layout.stride_mismatch(op, call, device)
        if mismatch is not None:
            return CellFailure(mismatch.layer, f"call {index}: {util}: {mismatch}")
    # A kernel returning an input (or a view of one) where the schema promises a fresh
    # tensor: test_faketensor sees it too (where test_schema does not run), as the schema's.
    aliases = (
        util == "test_faketensor"
        and "outputs_alias_inputs" in str(outcome)
        and _returns_an_input(out, fresh)
    )
    layer, hint = _UTILS["test_schema" if aliases else util]
    return CellFailure(
        layer, f"call {index}: {util}{raised_at(outcome)}: {first_line(outcome)}; {hint}"
    )


def _as_double(t: torch.Tensor) -> torch.Tensor:
    """float64 for gradcheck's finite differences; integer tensors stay as they are."""
    return t.double() if t.is_floating_point() else t


def _gradcheck(op, call: Call) -> None:
    """The backward against finite differences, on CPU in float64."""
    double = Call(*(map_tensors(c, _as_double) for c in (call.args, call.kwargs)))
    leaves = requires_grad(double)

    def with_leaves(*tensors):
        it = iter(tensors)
        swap = lambda t: next(it) if t.requires_grad else t  # noqa: E731
        return op(*map_tensors(double.args, swap), **map_tensors(double.kwargs, swap))

    try:
        torch.autograd.gradcheck(with_leaves, tuple(leaves))
    except Exception as err:  # noqa: BLE001 - a wrong or failing backward is a finding
        todo = implement_me(err)
        if todo is not None:
            raise todo from None
        raise CellFailure(
            "autograd",
            f"gradcheck: {first_line(err)}; the backward in autograd.py disagrees with "
            "finite differences of the CPU kernel",
        ) from None


def _returns_an_input(out, call: Call) -> bool:
    """Whether the kernel's output ``out`` is an input of ``call`` (or a view of one): then
    the schema's promise of a fresh tensor is broken, not only the fake function's output."""
    given = {t.untyped_storage().data_ptr() for t in tensors_of([call.args, call.kwargs])}
    return any(t.untyped_storage().data_ptr() in given for t in tensors_of(out))
