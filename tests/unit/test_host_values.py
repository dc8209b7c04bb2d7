"""Host arguments (#31): which calls change them per column (opsdk.harness.variants.cases),
and what npugraph_ex's captures of them say (opsdk.harness.core.host_values): a
recapture per value (a warning for a plain value, a failure for a declared one) and a
stale replay. In process; the column end to end is in tests/e2e/test_host_arguments.py."""

import json

import pytest
import torch

from opsdk._runtime.inputs import F32, OneOf, Support, declare_supported
from opsdk._runtime.spec import parse
from opsdk.harness import notes
from opsdk.harness.cell import CellFailure, Result
from opsdk.harness.core.host_values import Ledger, stale, taken
from opsdk.harness.variants.cases import Call, cases

_LIB = torch.library.Library("t_host_values", "FRAGMENT")


def _define(name: str, schema: str, fn):
    _LIB.define(f"{name}{schema}")
    _LIB.impl(name, fn, "CPU")
    op = getattr(torch.ops.t_host_values, name).default
    return op, parse(str(op._schema), validate=False)


def _lens(x, lens, sizes, dim=-1):
    return x * float(sum(lens)) + float(sum(sizes)) + dim


LENS_OP, LENS = _define(
    "lens", "(Tensor x, SymInt[] lens, int[] sizes, int dim=-1) -> Tensor", _lens
)
DECLARED_OP, DECLARED = _define(
    "declared_lens", "(Tensor x, SymInt[] lens, int[] sizes, int dim=-1) -> Tensor", _lens
)
declare_supported(
    DECLARED_OP,
    [Support(F32(2, 3), OneOf([3, 5], [4, 6]), [1], dim=-1)],
    non_contiguous=False,
)


def _values(case, name):
    index = [a.name for a in LENS.args].index(name)
    return [(c.args + list(c.kwargs.values()))[index] for c in case.calls]


@pytest.mark.parametrize("shapes", ["dynamic", "mark_static"])
def test_compiled_columns_step_an_undeclared_symint_list_and_keep_a_plain_int_list(shapes):
    [case] = cases(LENS, shapes, "npugraph_ex", steps=(0, 0, 0, 0), vary_from=2)
    assert _values(case, "lens") == [[2], [2], [3], [4]]
    assert _values(case, "sizes") == [[2]] * 4  # int[]: Dynamo bakes it in
    assert case.calls[2].changed == "lens [2] -> [3] on call 2"
    assert case.calls[2].by_default and not case.calls[2].declared


def test_a_static_graph_varies_no_list():
    [case] = cases(LENS, "static", "aot_eager", vary_from=1)
    assert not any(c.changed for c in case.calls)


def test_a_list_declared_with_oneof_takes_its_values_in_order_in_compiled_columns():
    [case] = cases(DECLARED, "dynamic", "npugraph_ex", steps=(0, 0, 0, 0), vary_from=2)
    assert _values(case, "lens") == [[3, 5], [3, 5], [4, 6], [3, 5]]
    assert case.calls[2].declared == ("lens",)


def test_eager_moves_lists_and_dim_like_ints_within_the_rank():
    [case] = cases(LENS, "static", "eager", vary_from=1)
    assert _values(case, "sizes") == [[2], [3], [4]]
    assert _values(case, "lens") == [[2], [3], [4]]
    assert [c.args[3] for c in case.calls] == [-1, 0, -1]  # without specs too (rank 2)
    [case] = cases(DECLARED, "static", "eager", vary_from=1)
    assert [c.args[3] for c in case.calls] == [-1, 0, -1]  # rank 2: -1 -> 0 -> -1
    [case] = cases(DECLARED, "dynamic", "aot_eager", vary_from=1)
    assert [c.args[3] for c in case.calls] == [-1] * 3  # a graph bakes an int in


_LIB.define("pick(Tensor x, int dim) -> Tensor")
_LIB.impl("pick", lambda x, dim: x.sum(dim) if dim == -1 else x.sum(99), "CPU")
declare_supported(
    torch.ops.t_host_values.pick.default, [Support(F32(2, 3), -1)], non_contiguous=False
)
PICK = parse(str(torch.ops.t_host_values.pick.default._schema), validate=False)


def test_a_dim_the_reference_refuses_keeps_its_declared_value():
    [case] = cases(PICK, "static", "eager", vary_from=1)
    assert [c.args[1] for c in case.calls] == [-1, -1, -1]


# ----- the ledger of captures per value -----------------------------------------------


def _call(lens, declared=(), sizes=(1,)):
    return Call([torch.ones(2, 3), lens, list(sizes)], {}, declared=declared)


def _ledger(calls, captures):
    ledger = Ledger(LENS)
    for call, captured in zip(calls, captures, strict=True):
        ledger.record((2, 3), call, captured=captured, eager=False)
    return ledger


def test_a_capture_per_plain_value_is_a_warning_naming_both_fixes():
    ledger = _ledger([_call([2]), _call([2]), _call([3]), _call([4])], [1, 0, 1, 1])
    warned = []
    ledger.check(warned.append)
    [message] = warned
    assert message.startswith("recaptured per value: 3 captures for 3 values of host ")
    assert "argument(s) lens at 1 shape(s) (values taken: lens: [2], [3], [4])" in message
    assert "--updatable lens" in message and "Fixed(...)" in message


def test_an_argument_that_sets_an_output_shape_is_not_told_to_be_updatable():
    ledger = Ledger(LENS)
    for lens, captured in (([2], True), ([3], True)):
        ledger.record((2, 3), _call(lens), captured=captured, eager=False, outputs=[lens])
    message, _ = ledger.recaptured()
    assert "opsdk new ... --updatable" not in message and "Fixed(...)" in message
    assert "(--updatable cannot apply: lens set(s) an output's shape, which a replay keeps)" in (
        message
    )


def test_a_capture_per_declared_value_fails_in_capture():
    calls = [_call([3, 5]), _call([3, 5]), _call([4, 6], declared=("lens",))]
    with pytest.raises(CellFailure, match="recaptured per value: 2 captures for 2") as failed:
        _ledger(calls, [1, 0, 1]).check(pytest.fail)
    assert failed.value.layer == "capture"


def test_one_capture_for_many_values_says_nothing():
    _ledger([_call([2]), _call([3]), _call([4])], [1, 0, 0]).check(pytest.fail)


def test_eager_calls_past_capture_limit_of_a_captured_shape_are_a_recapture_too():
    ledger = Ledger(LENS)
    ledger.record((2, 3), _call([2]), captured=True, eager=False)
    ledger.record((2, 3), _call([3]), captured=False, eager=True)
    message, declared = ledger.recaptured()
    assert "1 call(s) ran eagerly past capture_limit" in message and not declared


# ----- stale replays --------------------------------------------------------------------


def test_a_replay_computed_with_the_captured_host_values_is_stale():
    captured, now = _call([2]), _call([5])
    stale_out = _lens(now.args[0], [2], [1])
    failure = stale(LENS, LENS_OP, 3, now, [captured], stale_out, now, {})
    assert failure.layer == "stale-input"
    assert "call 3: stale replay" in str(failure)
    assert "lens captured [2], new [5]" in str(failure)
    # the right result, or one wrong otherwise, is not stale
    right = _lens(now.args[0], [5], [1])
    assert stale(LENS, LENS_OP, 3, now, [captured], right, now, {}) is None
    assert stale(LENS, LENS_OP, 3, now, [captured], right * 0, now, {}) is None
    assert stale(LENS, LENS_OP, 3, now, [now], right, now, {}) is None  # nothing changed


def test_a_replay_stale_in_one_argument_of_an_earlier_capture_names_that_argument():
    first, second = _call([2], sizes=[1]), _call([3], sizes=[4])
    now = _call([5], sizes=[7])
    stale_out = _lens(now.args[0], [5], [1])  # sizes from the first capture, lens updated
    failure = stale(LENS, LENS_OP, 4, now, [first, second], stale_out, now, {})
    assert "host argument(s) sizes (sizes captured [1], new [7])" in str(failure)


def test_a_passing_cell_notes_the_host_values_each_call_took():
    [case] = cases(DECLARED, "mark_static", "npugraph_ex", steps=(0, 0, 0, 0), vary_from=2)
    assert taken(DECLARED, case, captures=1) == (
        f"case {case.label}: host values taken: call 0 lens=[3, 5]; call 1 lens=[3, 5]; "
        "call 2 lens=[4, 6]; call 3 lens=[3, 5] (1 graph(s) captured for 1 shape(s))"
    )
    [static] = cases(DECLARED, "static", "ge", vary_from=1)
    assert taken(DECLARED, static) is None  # no call changed one: nothing to list
    with notes.collecting() as noted:
        notes.add("a")
        notes.add("a")
    notes.add("no cell collects: dropped")
    assert noted == ["a"]
    result = Result("ns::op", "ge", "mark_static", "pass", notes=noted)
    assert Result.from_json(json.loads(json.dumps(result.to_json()))) == result  # reports, cache


SCALE_OP, SCALE = _define(
    "scale", "(Tensor x, float eps, Scalar s) -> Tensor", lambda x, eps, s: x * eps * s
)
torch.library.register_fake("t_host_values::scale", lambda x, eps, s: torch.empty_like(x), lib=_LIB)


@pytest.mark.parametrize("changed", ["eps", "s"])
def test_dynamo_specializes_a_float_reaching_a_custom_op_so_compiled_columns_keep_it(changed):
    """torch 2.13's Dynamo (``specialize_float`` off by default) makes a SymFloat of a
    float input, but a custom op's ``float`` or ``Scalar`` argument specializes it (a guard
    ``eps == 0.5``): a new value recompiles, with ``dynamic=True`` too. So no SymFloat
    reaches an op's graph and the compiled columns keep floats; should Dynamo keep it one
    day, this fails: vary floats there then (``cases._may_vary``)."""
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend

    assert torch._dynamo.config.specialize_float is False
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    fn = torch.compile(SCALE_OP, backend=counter, dynamic=True, fullgraph=True)
    x = torch.ones(2, 3)
    fn(x, 0.5, 2.5)
    first = counter.frame_count
    fn(x, *({"eps": 0.5, "s": 2.5} | {changed: 1.5}).values())
    assert counter.frame_count == first + 1  # recompiled for the new value
    [case] = cases(SCALE, "dynamic", "npugraph_ex", steps=(0, 0, 0, 0), vary_from=2)
    assert not any(c.changed for c in case.calls)
