"""A CANN input whose value is read on the host (``.ValueDepend(...)``): a host argument.

An integer one is a ``SymInt`` (named like one number) or ``SymInt[]``, as torch_npu's
schemas take an axis, ``k`` or sizes; the IR keeps it a GE input fed from the value, the
specs declare its values. A float one (PadV3's ``constant_values``) stays a tensor."""

import re

import pytest

from opsdk import cann
from opsdk.cann.specs import cases
from opsdk.scaffold import NewRequest, new
from opsdk.scaffold.cann_torch import torch_side

INTS = "{ge::DT_INT32, ge::DT_INT64}"
FLOATS = "{ge::DT_FLOAT, ge::DT_FLOAT}"


def _opdef(inputs: str, name: str = "Vd") -> str:
    return f"""#include "register/op_def_registry.h"
namespace ops {{
class {name} : public OpDef {{
public:
    explicit {name}(const char* name) : OpDef(name)
    {{
        this->Input("x").DataType({FLOATS}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});
{inputs}
        this->Output("y").DataType({FLOATS}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});
        this->Attr("mode").AttrType(OPTIONAL).Int(0);
    }}
}};
OP_ADD({name});
}}
"""


def _input(name, types=INTS, extra=".ValueDepend(OPTIONAL)"):
    return f'        this->Input("{name}"){extra}.DataType({types});\n'


@pytest.mark.parametrize(
    ("inputs", "schema"),
    [
        (_input("axis"), "SymInt axis"),
        (_input("split_dim"), "SymInt split_dim"),
        (_input("k"), "SymInt k"),
        (_input("size_splits"), "SymInt[] size_splits"),
        (
            _input("paddings", extra=".ParamType(OPTIONAL).ValueDepend(REQUIRED)"),
            "SymInt[]? paddings",
        ),
        (_input("constant_values", FLOATS), "Tensor constant_values"),  # not ints: a tensor
        (_input("axis", extra=""), "Tensor axis"),  # its value is not read: a tensor
    ],
)
def test_an_int_value_input_is_a_host_argument(inputs, schema):
    (op,) = cann.read(_opdef(inputs))
    assert torch_side(op).schema == f"(Tensor x, {schema}, int mode=0) -> Tensor"


def test_the_specs_declare_the_values_and_the_ir_keeps_a_ge_input():
    (op,) = cann.read(_opdef(_input("axis") + _input("sizes")))
    side = torch_side(op)
    from opsdk._runtime import spec

    parsed = spec.parse(f"t::vd{side.schema}")
    assert cases(parsed, side.ir, op)[0] == "Support(F32(2, 3), Fixed(1), [2, 2])"
    assert [i.name for i in side.ir.inputs if i.value_depend] == ["axis", "sizes"]
    (n,) = cann.read(_opdef(_input("num")))
    side = torch_side(n)
    assert (
        cases(spec.parse(f"t::vd{side.schema}"), side.ir, n)[0] == "Support(F32(2, 3), OneOf(1, 2))"
    )


def test_the_converter_feeds_the_declared_int_type(tmp_path):
    """int64 where the definition takes it, int32 where it declares only int32 (GE checks)."""
    text = _opdef(_input("axis") + _input("size", "{ge::DT_INT32, ge::DT_INT32}"))
    source = tmp_path / "vd_def.cpp"
    source.write_text(text)
    pkg = new(NewRequest("vd", namespace="t_vd", out=tmp_path, from_cann=source)).path
    converter = (pkg / "vd" / "converter.py").read_text()
    assert '"axis": int64_input(axis)' in converter and '"size": int32_input(size)' in converter
    assert "from opsdk.converters import int32_input, int64_input" in converter
    specs = (pkg / "vd" / "specs.py").read_text()
    assert "Fixed, OneOf" not in specs and "Fixed" in specs  # imports what it uses


def test_attrs_are_positional_until_a_required_one_follows_a_default():
    """As torch_npu's schemas take them; torch refuses a required positional argument after
    a defaulted one, so from that default on they are keyword-only."""
    from opsdk.irdef import Attr, IrDef, Output

    def schema(*attrs):
        ir = IrDef("Op", [cann.read(_opdef(""))[0].ir.inputs[0]], [Output("y")], list(attrs))
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

    text = _opdef(_input(name)).replace("FORMAT_ND", f"FORMAT_{fmt}")
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
    (tmp_path / "vd_def.cpp").write_text(_opdef(_input("k", extra="")))
    (tmp_path / "vd_infershape.cpp").write_text(_infershape(dependency, constants))
    (op,) = cann.read(tmp_path / "vd_def.cpp")
    assert torch_side(op).schema == f"(Tensor x, {schema}, int mode=0) -> Tensor"
    k = op.ir.inputs[1]
    assert k.value_depend == ("optional" if schema == "SymInt k" else False)


def test_a_declared_value_depend_keeps_its_option_and_a_header_constant_is_read(tmp_path):
    (tmp_path / "vd_def.cpp").write_text(
        _opdef(_input("k", extra=".ValueDepend(REQUIRED)") + _input("axis", extra=""))
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
    (tmp_path / "vd_def.cpp").write_text(_opdef(_input("k", extra="") + _input("n", extra="")))
    text = _infershape(f".InputsDataDependency({dependency})")
    (tmp_path / "vd_infershape.cpp").write_text(text)
    with pytest.warns(cann.CannWarning, match=re.escape(said)):
        (op,) = cann.read(tmp_path / "vd_def.cpp")
    assert not any(i.value_depend for i in op.ir.inputs)
