"""Schema parsing and the rules `opsdk new` enforces before generating anything."""

import pytest
import torch

from opsdk._runtime import converters, spec
from opsdk.errors import SpecError


def test_default_out_of_place_schema():
    op = spec.parse(spec.default_schema("my_add", inplace=False), name="my_add")
    assert (op.namespace, op.name, op.overload) == ("custom", "my_add", "")
    assert op.qualname == "custom::my_add"
    assert [a.name for a in op.tensor_args] == ["x", "y"]
    assert not op.inplace and op.is_default_add
    assert converters.ir_def_for(op).op_type == "MyAdd"
    assert [r.type for r in op.returns] == ["Tensor"]


def test_default_inplace_schema():
    op = spec.parse(spec.default_schema("my_add", inplace=True), name="my_add", namespace="myops")
    assert op.qualname == "myops::my_add"
    assert [a.name for a in op.mutated_args] == ["x"]
    assert op.inplace and op.returns == () and op.is_default_add
    assert op.schema_args == "(Tensor(a!) x, Tensor y) -> ()"


def test_rich_schema_types_overload_and_kwargs():
    op = spec.parse(
        "ns::f.out(Tensor x, Tensor? w, Tensor[] xs, SymInt n, int[2] k=[1,1], *, "
        "float alpha=1.0, ScalarType? dtype=None) -> (Tensor a, Tensor b)",
        name="f",
    )
    assert op.qualname == "ns::f.out" and op.overload_attr == "out"
    types = {a.name: a.type for a in op.args}
    assert types == {
        "x": "Tensor",
        "w": "Tensor?",
        "xs": "Tensor[]",
        "n": "SymInt",
        "k": "int[2]",
        "alpha": "float",
        "dtype": "ScalarType?",
    }
    assert [a.name for a in op.args if a.kwarg_only] == ["alpha", "dtype"]
    assert next(a for a in op.args if a.name == "k").default == [1, 1]
    assert [r.name for r in op.returns] == ["a", "b"]
    assert not op.is_default_add


def test_schema_without_name_takes_the_op_name():
    assert spec.parse("(Tensor x) -> Tensor", name="gelu2").qualname == "custom::gelu2"


def test_camel_case_ir_names():
    assert spec.camel_case("my_fused_rms_norm") == "MyFusedRmsNorm"
    assert spec.camel_case("add") == "Add"


@pytest.mark.parametrize(
    ("schema", "kwargs", "needle"),
    [
        ("my_add(Tensor(a!) x, Tensor y) -> Tensor(b!)", {}, "-> ()"),
        ("my_add(Tensor(a!) x, Tensor y) -> (Tensor(b!), Tensor)", {}, "-> Tensor'"),
        ("my_add(Tensor(a!) x, Tensor y) -> (Tensor(a!), Tensor)", {}, "Tag.inplace"),
        ("my_add(Tensor y, Tensor(a!) x) -> Tensor(a!)", {}, "first argument"),
        ("my_add(Tensor x) -> ()", {}, "Tensor(a!)"),
        ("my_add(Tensor x, a? A) -> Tensor", {}, "no GE graph can take"),
        ("my_add(Tensor x, Layout l) -> Tensor", {}, "no GE graph can take"),
        ("my_add(Tensor(a) x) -> Tensor(a)", {}, "views"),
        ("my_add(Tensor x, Tensor y -> Tensor", {}, "does not parse"),
        ("other(Tensor x) -> Tensor", {}, "make them match"),
        ("my_add(Tensor lambda) -> Tensor", {}, "keyword"),
        ("aten::my_add(Tensor x) -> Tensor", {}, "reserved"),
        ("my_add(Tensor x) -> Tensor", {"namespace": "prim"}, "reserved"),
        ("my_add(Tensor x) -> Tensor", {"namespace": "my-ops"}, "not a valid identifier"),
        ("ns::my_add(Tensor x) -> Tensor", {"namespace": "other"}, "differs from --namespace"),
        ("my_add Tensor x", {}, "no argument list"),
        ("my_add(Tensor x, Tensor x) -> Tensor", {}, "named more than once"),
        ("my_add(Tensor x) -> (Tensor x, Tensor y)", {}, "named more than once"),
    ],
)
def test_rule_breaking_schemas_say_how_to_fix(schema, kwargs, needle):
    with pytest.raises(SpecError) as info:
        spec.parse(schema, name="my_add", **kwargs)
    message = str(info.value)
    assert needle in message
    assert "\n" not in message


def test_torch_npu_inplace_convention_returns_the_written_input():
    op = spec.parse("my_add_(Tensor(a!) self, Tensor y) -> Tensor(a!)", name="my_add_")
    assert [a.name for a in op.mutated_args] == ["self"]
    assert op.returns[0].alias_set == op.args[0].alias_set == "a"
    assert op.fresh_returns == () and spec.returns_its_first_argument(op)


def test_an_inplace_op_and_its_functional_partner_name_each_other():
    assert spec.partner("npu::scatter_update_") == "npu::scatter_update"
    assert spec.partner("npu::scatter_update.out") == "npu::scatter_update_.out"


def test_inplace_requires_a_marked_input():
    op = spec.parse("my_add(Tensor x, Tensor y) -> Tensor", name="my_add")
    with pytest.raises(SpecError, match=r"Tensor\(a!\)"):
        spec.require_inplace(op)


@pytest.mark.parametrize("name", ["1abc", "my-add", "class", "__init__", "", "a b"])
def test_bad_identifiers(name):
    with pytest.raises(SpecError):
        spec.check_identifier("op name", name)


def test_of_a_registered_op_is_its_spec_read_once():
    schema = "f(Tensor(a!) x, int[2] k, *, Scalar? s=None) -> ()"
    lib = torch.library.Library("opsdk_spec_of", "DEF")
    lib.define(schema)
    op = spec.resolve("opsdk_spec_of::f")
    assert op is torch.ops.opsdk_spec_of.f.default
    got = spec.of(op)
    assert got == spec.parse(f"opsdk_spec_of::{schema}")
    assert spec.of(op) is got  # kept, not parsed again
    assert [(a.name, a.mutated, a.aliased, a.is_symbolic) for a in got.args] == [
        ("x", True, True, False),
        ("k", False, False, False),
        ("s", False, False, True),
    ]


def test_resolve_names_the_op_it_cannot_find():
    with pytest.raises(SpecError, match=r"torch op opsdk_nowhere::f.x is not registered \(import"):
        spec.resolve("opsdk_nowhere::f.x")


def test_the_pair_and_the_partner_agree_on_a_name_ending_in_two_underscores():
    """One naming rule: ``upd__`` pairs with ``upd_`` (torch strips one underscore)."""
    inplace = spec.parse("upd__(Tensor(a!) self, Tensor y) -> Tensor(a!)", name="upd__")
    pair = spec.inplace_pair(inplace)
    assert [p.qualname for p in pair] == [inplace.qualname, spec.partner(inplace.qualname)]


@pytest.mark.parametrize(
    ("given", "printed"),
    [
        ("int[] s=[1,1,1,1]", "int[] s=[1, 1, 1, 1]"),
        ("int[] s=[-1, -1]", "int[] s=[-1, -1]"),
        ("int[] s=[2]", "int[] s=[2]"),
        ("int[2] s=[3,3]", "int[2] s=3"),  # torch's sized spelling, which it parses back
    ],
)
def test_an_int_list_default_of_equal_items_is_printed_as_torch_parses_it(given, printed):
    """torch prints ``int[] s=[1, 1]`` as ``int[] s=1`` and then refuses that text."""
    op = spec.parse(f'f(Tensor x, *, {given}, str t="int[] s=1") -> Tensor', namespace="lsd")
    assert printed in op.schema and 't="int[] s=1"' in op.schema
    assert spec.parse(op.schema, namespace="lsd").schema == op.schema
