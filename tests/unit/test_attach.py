"""opsdk.attach registers only what an op lacks; `opsdk new --pair/--attach` request rules."""

import itertools

import pytest
import torch

from opsdk import attach
from opsdk._runtime import attach as runtime_attach
from opsdk._runtime import spec
from opsdk.errors import SpecError
from opsdk.scaffold import NewRequest, attach_target, build_spec

_count = itertools.count()


@pytest.fixture
def elsewhere():
    """A fresh namespace where "another library" defined ``op`` with CPU and Meta kernels."""
    ns = f"attach_u{next(_count)}"
    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define("op(Tensor x) -> Tensor")
    lib.impl("op", lambda x: x + 1, "CPU")
    lib.impl("op", lambda x: torch.empty_like(x), "Meta")
    return ns, lib


def test_an_existing_definition_and_kernels_are_left_alone(elsewhere):
    ns, _ = elsewhere
    ours = torch.library.Library(ns, "FRAGMENT")
    assert not attach.define(ours, "op(Tensor x) -> Tensor")
    assert not attach.impl(ours, "op", lambda x: x * 100, "CPU")
    op = getattr(torch.ops, ns).op.default
    assert torch.equal(op(torch.zeros(2)), torch.ones(2))  # the other library's kernel


@pytest.mark.parametrize("helper", ["attach", "torch"])
def test_register_fake_leaves_a_meta_kernel_alone(elsewhere, helper):
    """torch's register_fake overrides the other library's Meta kernel (torch 2.13's
    allow_override=True); attach.register_fake leaves it alone."""
    ns, lib = elsewhere
    lib.impl("op", lambda x: x.new_empty(3), "Meta", allow_override=True)
    op = getattr(torch.ops, ns).op.default
    ours = torch.library.Library(ns, "FRAGMENT")
    register = attach.register_fake if helper == "attach" else torch.library.register_fake
    register(op, lib=ours)(lambda x: torch.empty_like(x))
    shape = op(torch.empty(2, device="meta")).shape
    assert shape == ((3,) if helper == "attach" else (2,))


def test_what_is_missing_is_registered():
    ns = f"attach_u{next(_count)}"
    ours = torch.library.Library(ns, "FRAGMENT")
    assert attach.define(ours, "op_(Tensor(a!) x) -> Tensor(a!)", tags=torch.Tag.inplace)
    assert attach.impl(ours, "op_", lambda x: x.add_(1), "CPU")
    op = getattr(torch.ops, ns).op_.default
    assert torch.Tag.inplace in op.tags
    attach.register_fake(op, lib=ours)(lambda x: x)
    assert runtime_attach.has_fake(op.name())
    assert torch.equal(op(torch.zeros(2)), torch.ones(2))


def test_attach_names_its_target_and_refuses_a_conflicting_name():
    assert attach_target("npu::npu_rms_norm", None, None) == ("npu_rms_norm", "npu")
    for bad in ("npu_rms_norm", "npu::a.b"):
        with pytest.raises(SpecError, match="NS::OP"):
            attach_target(bad, None, None)
    with pytest.raises(SpecError, match="differs from --attach"):
        attach_target("npu::npu_rms_norm", "other", None)


def test_npu_is_torch_npus_namespace_new_ops_go_elsewhere():
    schema = "npu_x(Tensor self) -> Tensor"
    with pytest.raises(SpecError, match="--attach npu::OP"):
        build_spec(NewRequest("npu_x", namespace="npu", schema=schema))
    op = build_spec(NewRequest("npu_x", namespace="npu", schema=schema, attach=True))
    assert op.qualname == "npu::npu_x"
    with pytest.raises(SpecError, match="drop --style cpp"):
        build_spec(NewRequest("npu_x", namespace="npu", schema=schema, attach=True, style="cpp"))


def test_attach_without_a_schema_reads_the_live_op(elsewhere):
    ns, _ = elsewhere
    assert (
        build_spec(NewRequest("op", namespace=ns, attach=True)).schema == "op(Tensor x) -> Tensor"
    )
    with pytest.raises(SpecError, match="give its schema with --schema"):
        build_spec(NewRequest("absent", namespace=ns, attach=True))


@pytest.mark.parametrize("name", ["upd", "upd_"])
@pytest.mark.parametrize(
    "schema",
    [
        None,
        "upd_(Tensor(a!) self, Tensor index, float s=1.0) -> Tensor(a!)",
        "upd(Tensor self, Tensor index, float s=1.0) -> Tensor",
    ],
)
def test_a_pair_is_given_by_either_name_and_either_schema(name, schema):
    op = build_spec(NewRequest(name, schema=schema, pair=True))
    inplace, functional = spec.inplace_pair(op)
    assert inplace == op and spec.returns_its_first_argument(op)
    assert functional.name == "upd" and not functional.inplace
    assert [a.type for a in functional.args] == [a.type for a in inplace.args]
    assert spec.inplace_pair(functional) == (inplace, functional)


@pytest.mark.parametrize(
    "schema",
    [
        "upd_(Tensor(a!) self, Tensor(b!) other) -> Tensor(a!)",  # two written
        "upd_(Tensor(a!) self, Tensor other) -> ()",  # returns nothing
        "upd(Tensor self, Tensor other) -> (Tensor, Tensor)",  # two returns
        "upd(int n, Tensor other) -> Tensor",  # first argument not a tensor
    ],
)
def test_a_pair_is_refused_unless_it_is_torch_npus_convention(schema):
    with pytest.raises(SpecError, match="in-place pair"):
        build_spec(NewRequest("upd", schema=schema, pair=True))


def test_an_existing_definition_of_another_schema_is_refused(elsewhere):
    """The package's fake and specs follow its schema: another one registered is no op of it."""
    ns, _ = elsewhere
    ours = torch.library.Library(ns, "FRAGMENT")
    assert not attach.define(ours, "op(Tensor x) -> Tensor")  # the same: left alone
    with pytest.raises(SpecError, match=rf"{ns}::op is registered as `{ns}::op\(Tensor x\) -> "
                       rf"Tensor`, but this package was written for `{ns}::op\(Tensor x, "
                       r"float scale=1\.\) -> Tensor`"):  # fmt: skip
        attach.define(ours, "op(Tensor x, float scale=1.0) -> Tensor")
