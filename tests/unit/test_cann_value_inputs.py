"""A CANN input whose value is read on the host (``.ValueDepend(...)``): a host argument.

An integer one is a ``SymInt`` (named like one number) or ``SymInt[]``, as torch_npu's
schemas take an axis, ``k`` or sizes; the IR keeps it a GE input fed from the value, the
specs declare its values. A float one (PadV3's ``constant_values``) stays a tensor."""

import re

import pytest
from value_input_defs import FLOATS, value_input, value_opdef

from opsdk import cann
from opsdk.cann.specs import cases
from opsdk.scaffold.cann_torch import torch_side


@pytest.mark.parametrize(
    ("inputs", "schema"),
    [
        (value_input("axis"), "SymInt axis"),
        (value_input("split_dim"), "SymInt split_dim"),
        (value_input("k"), "SymInt k"),
        (value_input("size_splits"), "SymInt[] size_splits"),
        (
            value_input("paddings", extra=".ParamType(OPTIONAL).ValueDepend(REQUIRED)"),
            "SymInt[]? paddings",
        ),
        (value_input("constant_values", FLOATS), "Tensor constant_values"),  # not ints: a tensor
        (value_input("axis", extra=""), "Tensor axis"),  # its value is not read: a tensor
    ],
)
def test_an_int_value_input_is_a_host_argument(inputs, schema):
    (op,) = cann.read(value_opdef(inputs))
    assert torch_side(op).schema == f"(Tensor x, {schema}, int mode=0) -> Tensor"


def test_the_specs_declare_the_values_and_the_ir_keeps_a_ge_input():
    (op,) = cann.read(value_opdef(value_input("axis") + value_input("sizes")))
    side = torch_side(op)
    from opsdk._runtime import spec

    parsed = spec.parse(f"t::vd{side.schema}")
    assert cases(parsed, side.ir, op)[0] == "Support(F32(2, 3), Fixed(1), [2, 2])"
    assert [i.name for i in side.ir.inputs if i.value_depend] == ["axis", "sizes"]
    (n,) = cann.read(value_opdef(value_input("num")))
    side = torch_side(n)
    assert (
        cases(spec.parse(f"t::vd{side.schema}"), side.ir, n)[0] == "Support(F32(2, 3), OneOf(1, 2))"
    )


def test_attrs_are_positional_until_a_required_one_follows_a_default():
    """As torch_npu's schemas take them; torch refuses a required positional argument after
    a defaulted one, so from that default on they are keyword-only."""
    from opsdk.irdef import Attr, IrDef, Output

    def schema(*attrs):
        ir = IrDef("Op", [cann.read(value_opdef(""))[0].ir.inputs[0]], [Output("y")], list(attrs))
        return torch_side(cann.CannOp(ir, {"x": ("DT_FLOAT",), "y": ("DT_FLOAT",)})).schema

    assert schema(Attr("a", "VT_INT"), Attr("b", "VT_FLOAT", 1.0)) == (
        "(Tensor x, int a, float b=1.0) -> Tensor"
    )
    assert schema(Attr("a", "VT_INT", 0), Attr("b", "VT_FLOAT"), Attr("c", "VT_BOOL", True)) == (
        "(Tensor x, *, int a=0, float b, bool c=True) -> Tensor"
    )


@pytest.mark.parametrize(
    ("name", "fmt", "value"),
    [("paddings", "ND", "[2, 2, 2, 2]"), ("size", "NCHW", "[2, 2]"), ("sizes", "ND", "[2, 2]")],
)
def test_a_value_list_is_as_long_as_its_name_says(name, fmt, value):
    """A pair per dim for paddings, the spatial dims for a resize's size, else one per dim."""
    from opsdk._runtime import spec

    text = value_opdef(value_input(name)).replace("FORMAT_ND", f"FORMAT_{fmt}")
    (op,) = cann.read(text)
    side = torch_side(op)
    assert f", {value})" in cases(spec.parse(f"t::vd{side.schema}"), side.ir, op)[0]


def _infershape(dependency: str, constants: str = "") -> str:
    """An ops-math style ``<op>_infershape.cpp`` registering Vd's inference."""
    return f"""#include "register/op_impl_registry.h"
namespace ops {{
{constants}
static ge::graphStatus InferShapeVd(gert::InferShapeContext* ctx) {{ return ge::GRAPH_SUCCESS; }}
IMPL_OP_INFERSHAPE(Vd)
    .InferShape(InferShapeVd){dependency};
}}
"""


@pytest.mark.parametrize(
    ("dependency", "constants", "schema"),
    [
        (".InputsDataDependency({1})", "", "SymInt k"),
        (".InputsDataDependency({1U})", "", "SymInt k"),
        (".InputsDataDependency({K_INDEX})", "constexpr size_t K_INDEX = 1;", "SymInt k"),
        (".InputsDataDependency({0})", "", "Tensor k"),  # x's value is read: x is no int
        ("", "", "Tensor k"),  # nothing says its value is read: a tensor
    ],
)
def test_an_input_the_infershape_reads_is_a_host_argument(tmp_path, dependency, constants, schema):
    """TopKV2's k: no .ValueDepend in its OpDef, InputsDataDependency({1}) where its
    InferShape is registered; it becomes what a ValueDepend(OPTIONAL) input does."""
    (tmp_path / "vd_def.cpp").write_text(value_opdef(value_input("k", extra="")))
    (tmp_path / "vd_infershape.cpp").write_text(_infershape(dependency, constants))
    (op,) = cann.read(tmp_path / "vd_def.cpp")
    assert torch_side(op).schema == f"(Tensor x, {schema}, int mode=0) -> Tensor"
    k = op.ir.inputs[1]
    assert k.value_depend == ("optional" if schema == "SymInt k" else False)


def test_a_declared_value_depend_keeps_its_option_and_a_header_constant_is_read(tmp_path):
    (tmp_path / "vd_def.cpp").write_text(
        value_opdef(
            value_input("k", extra=".ValueDepend(REQUIRED)") + value_input("axis", extra="")
        )
    )
    (tmp_path / "consts.h").write_text("static constexpr size_t AXIS_IDX{2};\n")
    text = _infershape(".InputsDataDependency({1, AXIS_IDX})", '#include "consts.h"')
    (tmp_path / "vd_infershape.cpp").write_text(text)
    (op,) = cann.read(tmp_path / "vd_def.cpp")
    assert [i.value_depend for i in op.ir.inputs] == [False, "required", "optional"]


@pytest.mark.parametrize(
    ("dependency", "said"),
    [("{MISSING}", "'MISSING' is no number"), ("{7}", "input 7 does not exist (3 inputs)")],
)
def test_an_unreadable_dependency_is_said_and_the_input_stays_a_tensor(tmp_path, dependency, said):
    (tmp_path / "vd_def.cpp").write_text(
        value_opdef(value_input("k", extra="") + value_input("n", extra=""))
    )
    text = _infershape(f".InputsDataDependency({dependency})")
    (tmp_path / "vd_infershape.cpp").write_text(text)
    with pytest.warns(cann.CannWarning, match=re.escape(said)):
        (op,) = cann.read(tmp_path / "vd_def.cpp")
    assert not any(i.value_depend for i in op.ir.inputs)
