"""Usage contexts in process, nothing compiled: which cells the matrix lays out, what
each context builds (bases, buffers), that eager of a context's function checks the npu
kernel against the CPU reference, and that a context that cannot apply is a skip."""

from types import SimpleNamespace

import pytest
import torch

from opsdk import harness
from opsdk._runtime.device import ensure_npu
from opsdk.errors import OpsdkError
from opsdk.harness import columns
from opsdk.harness.cell import CellFailure, Result
from opsdk.harness.core import run_scope, usage
from opsdk.harness.core.kernel import checked_kernel
from opsdk.harness.core.usage import usages
from opsdk.harness.variants import contexts
from opsdk.harness.variants.cases import cases, on_device
from opsdk.inputs import F32, Support, declare_supported

NS = "opsdk_unit_contexts"
ensure_npu()
_lib = torch.library.Library(NS, "DEF")


def _define(schema, npu, reference, fake):
    name = schema.partition("(")[0]
    _lib.define(schema)
    _lib.impl(name, npu, "PrivateUse1")
    _lib.impl(name, reference, "CPU")
    torch.library.register_fake(f"{NS}::{name}", fake, lib=_lib)
    op = getattr(torch.ops.opsdk_unit_contexts, name).default
    declare_supported(op, [Support(F32(2, 3), F32(2, 3))])
    return op


def _add_(x, y):
    x.add_(y)


def _from_storage_start(x, y):  # the bug the view context exists for
    x.as_strided(x.size(), x.stride(), 0).add_(y)


def _rebind_sum(x, y):  # rebinds x to a new, contiguous tensor: a layout x never had
    x.set_((x + y).contiguous())


IADD = _define("iadd(Tensor(a!) x, Tensor y) -> ()", _add_, _add_, lambda x, y: None)
FROM_START = _define(
    "from_start(Tensor(a!) x, Tensor y) -> ()", _from_storage_start, _add_, lambda x, y: None
)
REBINDS = _define("rebinds(Tensor(a!) x, Tensor y) -> ()", _rebind_sum, _add_, lambda x, y: None)
ADD = _define(
    "add(Tensor x, Tensor y) -> Tensor",
    lambda x, y: (x + y).contiguous(),
    torch.add,
    lambda x, y: torch.empty_like(x, memory_format=torch.contiguous_format),
)


KEEPS_LAYOUT = _define(  # the fake keeps x's layout; the kernel returns contiguous outputs
    "keeps_layout(Tensor x, Tensor y) -> Tensor",
    lambda x, y: (x + y).contiguous(),
    torch.add,
    lambda x, y: torch.empty_like(x),
)


def _package(*ops):
    return SimpleNamespace(__name__="ctxpkg", __file__=__file__, OPS=ops)


def _labels(cells, op):
    return [c.label for c in cells if c.op.overload() == op]


def test_in_place_ops_get_view_and_buffer_by_default_in_compiled_columns_only():
    cells = harness.cells(_package(IADD, ADD), ["eager", "ge"], ["static"])
    assert _labels(cells, IADD) == [
        "eager-static",
        "ge-static",
        "ge-static/view",
        "ge-static/buffer",
    ]
    assert _labels(cells, ADD) == ["eager-static", "ge-static"]
    every = harness.cells(_package(ADD), ["ge"], ["static"], contexts=["all"])
    assert [c.id for c in every] == [
        f"{NS}::add[ge-static{c}]" for c in ("", "/view", "/chain", "/twice", "/buffer")
    ]
    assert _labels(harness.cells(_package(IADD), ["ge"], ["static"], contexts=["none"]), IADD) == [
        "ge-static"
    ]


def test_an_unknown_context_is_a_one_line_error_naming_the_choices():
    with pytest.raises(OpsdkError, match="unknown context slice: choose from view, chain, twice"):
        contexts.select(IADD, ["slice"])


@pytest.mark.parametrize(
    ("op", "context", "shapes", "reason"),
    [
        (ADD, "buffer", "static", "writes no input (no Tensor(a!) argument) to hold"),
        (IADD, "buffer", "dynamic", "force_nn_module_property_static_shapes"),
    ],
)
def test_a_context_that_cannot_apply_is_a_skip_with_its_reason(op, context, shapes, reason):
    [cell] = [
        c
        for c in harness.cells(_package(op), ["aot_eager"], [shapes], contexts=[context])
        if c.context
    ]
    result = harness.run_cell(cell)
    assert result.status == "skip" and result.layer is None
    assert f"context {context} does not apply" in result.message and reason in result.message


def _usages(op, context, shapes="static", backend="aot_eager"):
    [cell] = [
        c for c in harness.cells(_package(op), [backend], [shapes], contexts=[context]) if c.context
    ]
    return usages(cell, cases(cell.op.spec, shapes, backend))


def test_view_makes_each_tensor_the_middle_slice_of_a_base_in_its_own_layout():
    plain, permuted = _usages(IADD, "view")  # the declared case and its non-contiguous copy
    assert permuted.case.label == "non-contiguous F32(2, 3), F32(2, 3)"
    for use, base, strides in ((plain, (3, 2, 3), (3, 1)), (permuted, (3, 3, 2), (1, 2))):
        call = use.case.calls[0]
        assert [tuple(b.shape) for b in call.args] == [base, base]
        x = call.args[0].select(0, 1)
        viewed = x if strides == (3, 1) else x.t()  # as the op sees it
        assert viewed.stride() == strides and viewed.storage_offset() == 6
        assert call.fixed[0][0] == 0  # the base's leading 3 stays in dynamic mode
    # the in-place write reaches the base's middle slice and nothing else
    call = on_device(plain.case.calls[0], "cpu")
    before = call.args[0].clone()
    plain.eager(*call.args)
    assert torch.equal(call.args[0][1], before[1] + call.args[1][1])
    assert torch.equal(call.args[0][0], before[0]) and torch.equal(call.args[0][2], before[2])


def test_eager_of_a_context_checks_the_npu_kernel_against_the_reference_there():
    """A kernel writing from its storage's start is right on whole tensors, wrong on a
    view, and the view context's eager check says so in layer eager."""
    for use in _usages(FROM_START, "view"):
        call = use.case.calls[0]
        with pytest.raises(CellFailure) as failure:
            checked_kernel(use.eager, 0, on_device(call, "npu"), on_device(call, "cpu"), {})
        assert failure.value.layer == "eager"
        assert "call 0: inputs after the call" in str(failure.value)
    for use in _usages(FROM_START, "twice"):  # whole tensors: the same kernel passes
        call = use.case.calls[0]
        checked_kernel(use.eager, 0, on_device(call, "npu"), on_device(call, "cpu"), {})


def test_buffer_holds_the_written_input_in_a_module_under_each_grad_mode():
    no_grad, inference, *_ = _usages(IADD, "buffer")  # then the non-contiguous case
    assert no_grad.case.label.endswith("under torch.no_grad()")
    assert inference.case.label.endswith("under torch.inference_mode()")
    call = on_device(inference.case.calls[0], "cpu")
    expected = call.args[0] + call.args[1]
    inference.eager(*call.args)
    assert inference.body.x is call.args[0]  # a registered buffer, written in place
    assert dict(inference.body.named_buffers())["x"] is call.args[0]
    assert torch.equal(call.args[0], expected)


def test_twice_feeds_the_first_output_to_the_second_call():
    use, _ = _usages(ADD, "twice")
    x, y = on_device(use.case.calls[0], "cpu").args
    once, again = use.eager(x, y)
    assert torch.equal(once, x + y) and torch.equal(again, once + y)


@pytest.mark.parametrize(
    ("alone", "says"),
    [
        ("pass", "(the op alone passes aot_eager-static: a bug only this context shows)"),
        ("fail", "(the op alone fails aot_eager-static too: fix that first)"),
    ],
)
def test_a_context_failure_says_whether_the_op_alone_passes(alone, says):
    """The view cell of a kernel writing from its storage's start fails before anything
    compiles; how the op alone did comes from the run (recorded here, not run)."""
    [cell] = [
        c
        for c in harness.cells(_package(FROM_START), ["aot_eager"], ["static"], contexts=["view"])
        if c.context
    ]
    with run_scope.together({"aot_eager"}):
        run_scope.record(Result(cell.op.name, "aot_eager", "static", alone, None, ""))
        result = harness.run_cell(cell)
    assert (result.status, result.layer) == ("fail", "eager")
    assert result.message.startswith(f"in context view {says}: case F32(2, 3), F32(2, 3): ")


RAN_ALONE: list[str] = []  # the plain cells the context-failing column ran


def run(cell, dump_dir=None) -> None:
    """A compiled column where the op passes alone and fails in every context."""
    if cell.context is None:
        RAN_ALONE.append(cell.id)
    else:
        raise CellFailure("fake", "wrong in context")


@pytest.fixture
def context_failing():
    RAN_ALONE.clear()
    with columns.register(columns.Column("ctxfail", __name__, (), "aot", compiles=True)):
        yield


def test_a_context_only_selection_runs_the_op_alone_once_for_every_context_verdict(
    context_failing,
):
    """pytest ``-k`` or ``--last-failed`` can leave the plain cell out of a run: it runs once,
    for every failing context cell of its column and shape mode, and is no result."""
    cells = harness.cells(_package(ADD), ["ctxfail"], ["static"], contexts=["chain", "twice"])
    chosen = [c for c in cells if c.context]
    results = harness.run_matrix(chosen)
    assert RAN_ALONE == [f"{NS}::add[ctxfail-static]"]
    assert [r.label for r in results] == ["ctxfail-static/chain", "ctxfail-static/twice"]
    for r in results:
        assert r.message.startswith(
            f"in context {r.context} (the op alone passes ctxfail-static: a bug only this "
            "context shows): wrong in context"
        ), r.message


def _fails_like_dynamo(*args, **kwargs):
    raise ValueError("Cannot view a tensor with shape torch.Size([2, 3]) and strides (1, 2)")


def _chain_broken(monkeypatch, op) -> BaseException:
    """What op's non-contiguous case raises in the chain context compiled for aot_eager,
    Dynamo's error (as compiling would raise it) standing in for the compile."""
    [use] = [u for u in _usages(op, "chain") if u.case.label.startswith("non-contiguous")]
    monkeypatch.setattr(usage, "compile_call", lambda *a, **k: _fails_like_dynamo)
    call = on_device(use.case.calls[0], "npu")
    with pytest.raises(Exception) as raised:
        use.compile("aot_eager", "static")(*call.args, **call.kwargs)
    return raised.value


@pytest.mark.parametrize(
    ("op", "layer"), [(KEEPS_LAYOUT, "fake"), (ADD, None)], ids=["keeps_layout", "contiguous"]
)
def test_a_chain_failure_names_the_fake_strides_that_differ_from_the_kernels(
    monkeypatch, op, layer
):
    """The next op of a chain reads the fake function's strides: where they differ from
    the npu kernel's, a failure of the compiled chain says so and how to fix it; where
    they agree, the failure is left to the generic classification. (Dynamo's error, as
    compiling would raise it, stands in for a compile.)"""
    failure = _chain_broken(monkeypatch, op)
    if layer is None:
        assert isinstance(failure, ValueError)
        return
    assert isinstance(failure, CellFailure) and failure.layer == "fake", failure
    assert (
        "broke the next op in the graph (ValueError: Cannot view a tensor with shape "
        "torch.Size([2, 3]) and strides (1, 2)): output 0 (sizes [2, 3]): the npu kernel "
        "returned strides (3, 1) (contiguous), the fake function strides (1, 2) (not "
        "contiguous)"
    ) in str(failure)
    assert "the fake must return the strides the kernel returns: use meta.same_as(x)" in str(
        failure
    )


@pytest.mark.parametrize(("op", "status"), [(REBINDS, "fail"), (IADD, "pass")])
def test_a_kernel_that_rebinds_a_written_input_fails_in_eager_naming_the_strides(op, status):
    """``x.set_(result)`` gives a non-contiguous x the result's strides: the values are
    right, the layout the graph keeps for x is not; the eager column says so."""
    [cell] = harness.cells(_package(op), ["eager"], ["static"])
    result = harness.run_cell(cell)
    assert result.status == status, result.message
    if status == "fail":
        assert result.layer == "eager"
        assert result.message.startswith(
            "case non-contiguous F32(2, 3), F32(2, 3): call 0: the npu kernel changed a "
            "written input's layout ('x': strides (1, 2) -> (3, 1)): write into it (copy_, "
            "out=) instead of rebinding it (set_, .data =)"
        ), result.message


@pytest.mark.parametrize(("op", "layer"), [(REBINDS, "eager"), (IADD, None)])
def test_a_chain_broken_by_a_rebound_input_is_the_kernels_fault_not_the_fakes(
    monkeypatch, op, layer
):
    """The chain's next op reads x's strides as the graph keeps them; a kernel that rebound
    x broke it (layer eager), where the fake function is right. A kernel that writes into
    x is left to the generic classification. (Dynamo's error stands in for a compile.)"""
    raised = _chain_broken(monkeypatch, op)
    if layer is None:
        assert isinstance(raised, ValueError)
        return
    assert isinstance(raised, CellFailure) and raised.layer == layer
    assert str(raised).startswith(
        "the npu kernel changed a written input's layout ('x': strides (1, 2) -> (3, 1))"
    )
    assert "(it broke the next op in the graph: ValueError: Cannot view" in str(raised)
