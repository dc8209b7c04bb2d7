"""Reading AscendC OpDef code (``op_host/<op>_def.cpp``) into the CANN model, and back.

The texts are opsdk's own, written the way CANN's op repositories write theirs: file
constants, templates and helpers, per-chip configs, macros, loops and comments. A few
real production files are read too when the public mirrors are on this machine.
"""

from __future__ import annotations

import re
import warnings

import pytest
from opdef_text import BF16, F16, F32, opdef, read_one

from opsdk import cann
from opsdk._runtime.irdef import Attr, Input, Output
from opsdk.cann import CannWarning
from opsdk.cann.exports import msopgen_json, opdef_cpp, reg_op
from opsdk.errors import SpecError
from opsdk.scaffold.cann_torch import torch_side


def test_chains_give_kinds_and_one_row_per_column():
    op = read_one(
        opdef(
            """
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_NCHW})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_NCHW})
            .AutoContiguous();
        this->Input("bias")  // optional: aclnn takes a nullptr
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("xs").ParamType(DYNAMIC).DataType({ge::DT_INT8, ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND}).IgnoreContiguous();
        /* the output: the first input's type */
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_NCHW});
        this->AICore().AddConfig("ascend910b");
"""
        )
    )
    assert op.ir.op_type == "MyOp"
    assert op.ir.inputs == (Input("x"), Input("bias", "optional"), Input("xs", "dynamic"))
    assert op.ir.outputs == (Output("y"),)
    assert op.dtypes == {"x": (F16, BF16, F32), "bias": (F32,) * 3, "xs": ("DT_INT8",) * 3,
                         "y": (F16, BF16, F32)}  # fmt: skip
    assert op.formats["x"] == ("ND", "ND", "NCHW") and op.formats["bias"] == ("ND",) * 3


def test_lists_take_each_value_with_every_row():
    """DataTypeList/FormatList: one value for every row (CANN's FullPermutation)."""
    op = read_one(
        opdef(
            """
        this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("scale").DataTypeList({ge::DT_FLOAT}).FormatList({ge::FORMAT_ND});
        this->Input("index").DataTypeList({ge::DT_INT32, ge::DT_INT64});
        this->Output("y").DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
"""
        )
    )
    assert op.ir.inputs == (Input("x"), Input("scale"), Input("index"))  # REQUIRED by default
    assert op.dtypes["x"] == (F16, F16, F32, F32)
    assert op.dtypes["index"] == ("DT_INT32", "DT_INT64") * 2
    assert op.dtypes["scale"] == (F32,) * 4 and op.formats["index"] == ("ND",) * 4


def test_value_depend_scalars_follow_and_output_facts():
    op = read_one(
        opdef(
            """
        this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_NCHW, ge::FORMAT_NHWC});
        this->Input("axes")
            .ValueDepend(REQUIRED, DependScope::TILING)
            .DataType({ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_NCHW, ge::FORMAT_NCHW});
        this->Input("shift").ParamType(OPTIONAL).ValueDepend(OPTIONAL)
            .DataType({ge::DT_INT32, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("alpha").Scalar().To(ge::DT_FLOAT);
        this->Input("beta").Scalar().To("x");
        this->Input("steps").ScalarList().DataType({ge::DT_INT64, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("mask").Follow("x", FollowType::FORMAT).DataType({ge::DT_BOOL, ge::DT_BOOL});
        this->Output("y").Follow("x");
        this->Output("z").Follow("x", FollowType::DTYPE).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("w").Follow("x", FollowType::SHAPE).DataType({ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("count")
            .DataType({ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .OutputShapeDependOnCompute()
            .InitValue(0)
            .Version(1);
"""
        )
    )
    inputs = {i.name: i for i in op.ir.inputs}
    assert inputs["axes"] == Input("axes", value_depend=True)
    assert inputs["shift"] == Input("shift", "optional", value_depend="optional")  # its option
    assert inputs["alpha"].scalar == "scalar" and inputs["steps"].scalar == "scalar_list"
    assert op.formats["axes"] == ("ND", "ND")  # a host input has no layout
    assert op.dtypes["alpha"] == (F32, F32) and op.dtypes["beta"] == (F16, BF16)
    assert op.dtypes["steps"] == ("DT_INT64", F32)
    assert op.dtypes["mask"] == ("DT_BOOL",) * 2 and op.formats["mask"] == ("NCHW", "NHWC")
    assert op.dtypes["y"] == (F16, BF16) and op.formats["y"] == ("NCHW", "NHWC")
    assert op.dtypes["z"] == (F16, BF16) and op.formats["z"] == ("ND", "ND")
    assert op.dtypes["w"] == ("DT_INT8",) * 2  # a shape follower keeps its types
    assert op.ir.outputs[-1] == Output("count", depends_on_compute=True)
    assert op.init_values == {"count": 0.0}  # the runtime zeroes it before the kernel


def test_attrs_as_op_def_h_sets_them():
    op = read_one(
        opdef(
            """
        this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("axis").Int();                           // no AttrType: required
        this->Attr("groups").AttrType(REQUIRED).Int(1);     // a required attr's value is ignored
        this->Attr("eps").AttrType(OPTIONAL).Float(1e-6f);
        this->Attr("scale").AttrType(OPTIONAL).Float();     // CANN's initial values
        this->Attr("count").AttrType(OPTIONAL).Int();
        this->Attr("flag").AttrType(OPTIONAL).Bool();
        this->Attr("mode").AttrType(OPTIONAL).String();
        this->Attr("sizes").AttrType(OPTIONAL).ListInt();
        this->Attr("strides").AttrType(OPTIONAL).ListInt({1, 1, 2});
        this->Attr("ratios").AttrType(OPTIONAL).ListFloat({1, 0.5});
        this->Attr("keep").AttrType(OPTIONAL).ListBool({true, false});
        this->Attr("dst_type").AttrType(OPTIONAL).Int(ge::DT_INT64);
        this->Attr("heads").AttrType(OPTIONAL).Int(8.0);    // C++ converts to int64_t
        this->Attr("reduce").AttrType(OPTIONAL).String("mean");
        this->Attr("legacy").AttrType(OPTIONAL);             // no setter: CANN's Bool
"""
        )
    )
    assert op.ir.attrs == (
        Attr("axis", "VT_INT"),
        Attr("groups", "VT_INT"),
        Attr("eps", "VT_FLOAT", 1e-6),
        Attr("scale", "VT_FLOAT", 0.0),
        Attr("count", "VT_INT", 0),
        Attr("flag", "VT_BOOL", False),
        Attr("mode", "VT_STRING", ""),
        Attr("sizes", "VT_LIST_INT", ()),
        Attr("strides", "VT_LIST_INT", (1, 1, 2)),
        Attr("ratios", "VT_LIST_FLOAT", (1.0, 0.5)),
        Attr("keep", "VT_LIST_BOOL", (True, False)),
        Attr("dst_type", "VT_INT", 9, dtype=True),  # GE's DT_INT64: an Int holding a dtype
        Attr("heads", "VT_INT", 8),
        Attr("reduce", "VT_STRING", "mean"),
        Attr("legacy", "VT_BOOL", False),
    )


def test_op_level_calls_are_tolerated():
    op = read_one(
        opdef(
            """
        this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Comment(CommentSection::BRIEF, R"doc(An op of the "test".)doc");
        this->SetInferShape(ge::InferShapeMyOp).SetInferDataType(ge::InferDataTypeMyOp);
        this->AICore().SetTiling(optiling::TilingMyOp).SetCheckSupport(optiling::CheckMyOp);
        this->MC2().HcclGroup({"group_ep", "group_tp"});
        this->FormatMatchMode(FormatCheckOption::STRICT);
        OpAICoreConfig config;
        config.DynamicCompileStaticFlag(true)
            .DynamicRankSupportFlag(true)
            .ExtendCfgInfo("opFile.value", "my_op")
            .ExtendCfgInfo("aclnnSupport.value", "support_aclnn");
        this->AICore().AddConfig("ascend910b", config);
        this->AICore().AddConfig("ascend910_93", config);
"""
        )
    )
    assert op.ir.inputs == (Input("x"),) and op.dtypes == {"x": (F32,), "y": (F32,)}


PER_CHIP = opdef(
    """
        // Every chip states its own types; DT_MAX is a placeholder each config replaces.
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_MAX}).Format({ge::FORMAT_END});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_MAX}).Format({ge::FORMAT_END});
        this->Attr("eps").AttrType(OPTIONAL).Float(1e-5);
        SetChip(A5_TYPES, "ascend950");
        SetChip(A2_TYPES, "ascend910b");
        SetChip(A2_TYPES, "ascend910_93");
""",
    head="""
static const std::vector<ge::DataType> A2_TYPES = {ge::DT_FLOAT16, ge::DT_BF16};
static const std::vector<ge::DataType> A5_TYPES = {ge::DT_FLOAT16, ge::DT_HIFLOAT8, ge::DT_BF16};
""",
    members="""
private:
    void SetChip(const std::vector<ge::DataType>& types, const char* chip)
    {
        std::vector<ge::Format> formats(types.size(), ge::FORMAT_ND);
        OpAICoreConfig config;
        config.Input("x").ParamType(REQUIRED).DataType(types).Format(formats);
        config.Input("offset").ParamType(OPTIONAL).DataType(types).Format(formats);  // chip's own
        config.Output("y").ParamType(REQUIRED).DataType(types).Format(formats);
        this->AICore().AddConfig(chip, config);
    }
""",
)


def test_the_prototype_is_the_op_merged_with_the_atlas_a2_config():
    op = read_one(PER_CHIP)
    assert op.ir.inputs == (Input("x"), Input("offset", "optional"))  # appended by the config
    assert op.dtypes == {"x": (F16, BF16), "offset": (F16, BF16), "y": (F16, BF16)}


def test_without_an_a2_or_a3_chip_the_first_chip_added_is_read():
    text = PER_CHIP.replace('SetChip(A2_TYPES, "ascend910b");', "").replace(
        'SetChip(A2_TYPES, "ascend910_93");', 'SetChip(A2_TYPES, "ascend310p");'
    )
    assert read_one(text).dtypes["x"] == (F16, "DT_HIFLOAT8", BF16)


def test_an_op_declaring_its_tensors_only_per_chip():
    op = read_one(
        opdef(
            """
        OpAICoreConfig config;
        config.Input("query").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        config.Input("mask").ParamType(OPTIONAL).DataType({ge::DT_BOOL, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        config.Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().AddConfig("ascend910b", config);
        config.Input("query").DataType({ge::DT_FLOAT, ge::DT_FLOAT});  // after: not 910b's
"""
        )
    )
    assert [i.name for i in op.ir.inputs] == ["query", "mask"]
    assert op.dtypes["query"] == (F16, BF16) and op.dtypes["mask"] == ("DT_BOOL", "DT_UINT8")


PROGRAM = r"""/**
 * Copyright notice of a made-up op: opsdk's test data.
 */
/*!
 * \file fused_norm_def.cpp
 * \brief written the way production files are: constants, templates, helpers, macros.
 */
#include <cstdint>
#include <initializer_list>
#include "register/op_def_registry.h"

#define ALL_ND {ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND}
#define DECLARE_OUTPUT(cfg, NAME, types) \
    cfg.Output(#NAME).ParamType(REQUIRED).DataType(types).Format(ALL_ND)
#define TYPES_OF(kind) kind##_TYPES

namespace ops {
constexpr std::initializer_list<ge::DataType> X_TYPES = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
constexpr std::initializer_list<ge::DataType> RSTD_TYPES =
    {ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT};
static const std::map<std::string, std::vector<ge::DataType>> GAMMA_TYPES = {
    {"ascend910b", {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16}},
    {"ascend310p", {ge::DT_FLOAT16, ge::DT_FLOAT}},
};
constexpr int32_t VERSION_TWO = 2;

inline ge::DataType ScalarTypeOf(ge::DataType dtype)
{
    switch (dtype) {
        case ge::DT_FLOAT16:
        case ge::DT_BF16:
        case ge::DT_FLOAT:
            return ge::DT_FLOAT;
        default:
            return ge::DT_INT64;
    }
}

template <typename ConfigT>
static void AddInput(ConfigT& config, const char* name, std::initializer_list<ge::DataType> types,
                     Option kind = REQUIRED)
{
    std::vector<ge::Format> formats(types.size(), ge::FORMAT_ND);
    config.Input(name).ParamType(kind).DataType(types).Format(formats).UnknownShapeFormat(formats);
}

static void SetBase(OpDef& op)
{
    static const char* kInputs[] = {"x1", "x2"};
    for (auto name : kInputs) {
        AddInput(op, name, X_TYPES);
    }
    int rounds = 0;
    while (rounds < 2) {
        ++rounds;
    }
    do {
        rounds -= 1;
    } while (rounds > 0);
    AddInput(op, "gamma", X_TYPES);
    DECLARE_OUTPUT(op, y, TYPES_OF(X));
    DECLARE_OUTPUT(op, rstd, RSTD_TYPES);
    op.Attr("epsilon").AttrType(OPTIONAL).Float(1e-6);
}

class FusedNorm : public OpDef {
public:
    explicit FusedNorm(const char* name) : OpDef(name)
    {
        SetBase(*this);
        std::vector<ge::DataType> scalars;
        std::for_each(X_TYPES.begin(), X_TYPES.end(), [&scalars](ge::DataType dtype) {
            scalars.push_back(ScalarTypeOf(dtype));
        });
        this->Input("alpha").ParamType(OPTIONAL).Scalar().DataType(scalars).Format(ALL_ND)
            .Version(VERSION_TWO);
        std::vector<ge::DataType> flags{3, ge::DT_BOOL};  // vector(3, DT_BOOL), no int converts
        for (size_t i = 0; i < flags.size(); ++i) {
            if (i == 1) {
                continue;
            }
        }
        this->Output("mask").DataType(flags).Format({ALL_ND});
        this->AICore().AddConfig("ascend910b", ChipConfig("ascend910b"));
        this->AICore().AddConfig("ascend310p", ChipConfig("ascend310p"));
        // OP_ADD(NotAnOp); in a comment registers nothing
    }

private:
    OpAICoreConfig ChipConfig(const char* chip) const
    {
        OpAICoreConfig config;
        config.DynamicCompileStaticFlag(true).ExtendCfgInfo("opFile.value", "fused_norm");
        AddInput(config, "gamma", GAMMA_TYPES.find(chip)->second);
        if (strcmp(chip, "ascend910b") != 0) {
            config.Input("x1").DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
        }
        return config;
    }
};

OP_ADD(FusedNorm);
}  // namespace ops
"""


def test_a_file_written_with_constants_helpers_templates_macros_and_loops():
    op = read_one(PROGRAM)
    assert op.ir.op_type == "FusedNorm"
    assert op.ir.inputs == (Input("x1"), Input("x2"), Input("gamma"), Input("alpha", "optional",
                            scalar="scalar"))  # fmt: skip
    assert [o.name for o in op.ir.outputs] == ["y", "rstd", "mask"]
    assert op.ir.attrs == (Attr("epsilon", "VT_FLOAT", 1e-6),)
    assert op.dtypes["x1"] == op.dtypes["gamma"] == op.dtypes["y"] == (F16, F32, BF16)
    assert op.dtypes["alpha"] == (F32,) * 3 and op.dtypes["rstd"] == (F32,) * 3
    assert op.dtypes["mask"] == ("DT_BOOL",) * 3 and op.formats["mask"] == ("ND",) * 3


HEADER = """#ifndef MY_PROTO_UTILS_H_
#define MY_PROTO_UTILS_H_
#include "register/tilingdata_base.h"

BEGIN_TILING_DATA_DEF(MyTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;

inline ge::DataType ToScalar(ge::DataType dtype)
{
    return dtype == ge::DT_INT32 ? ge::DT_INT64 : ge::DT_FLOAT;
}
#endif
"""

INCLUDING = opdef(
    """
        std::vector<ge::DataType> types = {ge::DT_FLOAT16, ge::DT_INT32};
        std::vector<ge::DataType> scalar_types;
        for (const auto& dtype : types) {
            scalar_types.push_back(ToScalar(dtype));
        }
        this->Input("x").ParamType(DYNAMIC).DataType(types).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("value").Scalar().DataType(scalar_types).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(DYNAMIC).DataType(types).Format({ge::FORMAT_ND, ge::FORMAT_ND});
""",
    head='}\n#include "../../utils/op_host/my_proto_utils.h"\nnamespace ops {',
    name="ForeachAddValue",
)


def test_a_projects_own_header_is_read_beside_the_file(tmp_path):
    utils = tmp_path / "foreach" / "utils" / "op_host"
    utils.mkdir(parents=True)
    (utils / "my_proto_utils.h").write_text(HEADER)
    source = tmp_path / "foreach" / "foreach_add_value" / "op_host" / "foreach_add_value_def.cpp"
    source.parent.mkdir(parents=True)
    source.write_text(INCLUDING)
    op = read_one(source)
    assert op.dtypes["value"] == (F32, "DT_INT64") and op.ir.inputs[1].scalar == "scalar"
    with pytest.raises(SpecError) as err:  # the text alone: its include is not found
        cann.read(INCLUDING)
    assert "<text>:" in str(err.value) and "ToScalar(...): it is not defined in this file" in str(
        err.value
    )
    assert "(its includes not found: ../../utils/op_host/my_proto_utils.h)" in str(err.value)


def test_ref_output_and_optional_output():
    text = opdef(
        """
        this->Input("var").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("grad").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("var").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});  // written in place
        this->Output("norm").ParamType(OPTIONAL).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
"""
    )
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        op = read_one(text)
    assert op.ir.outputs == (Output("var"), Output("norm"))  # GE has no optional output
    assert [str(w.message) for w in heard if w.category is CannWarning] == [
        "<text>: MyOp: output 'norm' is OPTIONAL; GE's prototype has no optional output, "
        "opbuild makes it required: so does opsdk"
    ]
    assert torch_side(op).schema == "(Tensor(a!) var, Tensor grad) -> Tensor"


def test_an_op_without_outputs_has_no_torch_side():
    """CANN's in-place ops without outputs (``ForeachZeroInplace``) write an input the
    definition does not name: refused before any torch schema is written."""
    op = read_one(opdef('this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});'))
    with pytest.raises(SpecError, match="MyOp: no output is declared, so which input it writes"):
        torch_side(op)


def test_several_ops_in_one_file_and_choosing_one():
    one = opdef('this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});', name="A")
    two = opdef('this->Input("y").DataType({ge::DT_INT8}).Format({ge::FORMAT_ND});', name="B")
    text = one + two.split("*/", 1)[1]
    assert [op.ir.op_type for op in cann.read(text)] == ["A", "B"]
    assert [op.ir.inputs[0].name for op in cann.read(text, op_types=["B"])] == ["y"]


WRAP = 'this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (WRAP + 'this->Input("y").Shape({2});', "the OpParamDef method .Shape() of 'y'"),
        ('this->Attr("a").AttrType(OPTIONAL).Tensor();', "the OpAttrDef method .Tensor() of 'a'"),
        ('this->Attr("a").AttrType(OPTIONAL).ListListInt({{1}});', "ListListInt has no GE IR"),
        (WRAP + "AddInputs(*this);", "AddInputs(...): it is not defined in this file"),
        ('this->Input("x").DataType(X_TYPES);', "X_TYPES: it is not defined in this file"),
        (WRAP + "if (IsA5()) {}", "IsA5(...): it is not defined in this file"),
        (WRAP + "while (true) {}", "a loop that does not end"),
        (
            WRAP + 'this->Input("y").DataType({ge::DT_FLOAT, ge::DT_INT8});',
            "its lists differ in length ('x' 1, 'y' 2)",
        ),
        (WRAP + 'this->Input("y").Format({ge::FORMAT_ND});', "'y': it declares no DataType"),
        ('this->Input("x").DataType({ge::DT_MAX});', "'x': DT_MAX is not a data type"),
        (
            'this->Input("x").DataType({ge::DT_FLOAT}).DataTypeList({ge::DT_FLOAT});',
            "'x' declaring both DataType and DataTypeList",
        ),
        (WRAP + 'this->Output("y").Follow("z");', "Follow('z'): no such input"),
        (WRAP + 'this->Input("s").Scalar().To("z");', "To('z'): no such input"),
        ('this->Input("x").ParamType(1);', "ParamType(int): give REQUIRED, OPTIONAL or DYNAMIC"),
        (WRAP + 'this->Output("s").Scalar().To(ge::DT_FLOAT);', "output 's' declared .Scalar()"),
        ('this->Input("x").DataType({ge::FORMAT_ND});', "FORMAT_ND in DataType: give ge::DT_*"),
        (WRAP + "try { } catch (...) { }", "cannot read a try statement"),
        (WRAP + "auto* p = new OpAICoreConfig();", "cannot read new"),
        (WRAP + "int a = 1 / 0;", "a division by zero"),
        (WRAP + "int a = `1;", "cannot read the character '`'"),
        (WRAP + "int a = (1;", "an unclosed '('"),
        (WRAP + "this->AICore().AddConfig(910);", "AddConfig(int): give the chip's name"),
        (WRAP + "std::vector<int> v = {1}; int a = v[3];", "the element 3 of list"),
    ],
)
def test_what_cannot_be_read_is_refused_in_one_line(body, message):
    with pytest.raises(SpecError) as err:
        cann.read(opdef(body))
    text = str(err.value)
    assert message in text, text
    assert text.startswith("<text>:") and "\n" not in text
    assert text.endswith("; change that line, or give the op as msopgen JSON or REG_OP")


MAP = "std::map<int, int> m = {{1, 2}};"
HELPER = "void F(int a) {}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("struct P { int a; };", "cannot read a struct declared inside a function"),
        ("do {} x;", "expected while after do"),
        ("case 1: ;", "cannot read a case label outside a switch"),
        ("int a = 1; int b = a.first;", "cannot read the member first of int"),
        ("std::vector<int> v; v.size() = 2;", "cannot read this assignment"),
        ("std::vector<int> v; int b = v + 1;", "cannot read arithmetic on list"),
        ("int a = 1.5 & 2;", "cannot read the operator &"),
        ("std::vector<int> v; int a = *v.begin();", "an iterator past its container"),
        (MAP + "int a = m.find(3)->second;", "find(...) of a key the map does not hold"),
        (MAP + "int a = m.at(3);", "cannot read at(3): the map does not hold it"),
        ("std::vector<int> v; v.insert(1);", "cannot read this insert(...)"),
        ("std::for_each(1, 2, 3);", "cannot read this std::for_each"),
        ('int a = strcmp(1, "x");', "cannot read strcmp on what is not a string"),
        ("int a = 1; a(2);", "cannot call int"),
        ("F();", "F() takes 1 arguments, given 0"),
        ("auto f = [](int a) {}; f();", "a lambda takes 1 arguments, given 0"),
        ("for (auto x : 5) {}", "cannot read a for loop over int"),
        ("std::vector<int> v; if (v) {}", "cannot read a condition on list"),
        ("int a = 08;", "cannot read the number 08"),
        ("std::vector<int> v; v.sort();", "cannot read the call .sort() on list"),
        ("std::vector<int> v(1.5, 2, 3);", "cannot read this construction of a std::vector"),
        ("Foo x(1, 2);", "cannot read the construction of Foo"),
        ("int a = sizeof(int);", "cannot read sizeof"),
        ("if 1 {}", "expected '(' before '1'"),
        ("F(1 2);", "cannot read '2' in an argument list"),
        ("int a = (1 2);", "cannot read '2' in parentheses"),
        ("std::vector<int> v = {1 2};", "cannot read '2' in braces"),
        ("auto f = [] x;", "cannot read a lambda without a body"),
        ("int a = 1; int b = a.+;", "cannot read the member '+'"),
        ("int a = ;", "cannot read ';' in an expression"),
        ("throw 1;", "cannot read a throw statement"),
        ("this->Input(1);", "cannot read Input(int): give the tensor's name"),
        ("this->Attr(1);", "cannot read Attr(int): give the attr's name"),
        ('this->AICore().AddConfig("ascend910b", 1);', "cannot read AddConfig's config int"),
        ('this->Attr("a").AttrType(OPTIONAL).ListInt(1);', "attr 'a': ListInt takes a list"),
        ('this->Attr("a").AttrType(OPTIONAL).Int("x");', "attr 'a': Int(str)"),
        ('this->Input("x").Follow(1);', ".Follow() of 'x': give the followed name"),
        ('this->Input("x").Scalar().To(1);', ".To() of 'x': give a ge::DT_* or an input name"),
        (
            'this->Input("x").Format({ge::FORMAT_ND}).FormatList({ge::FORMAT_ND});',
            "'x' declaring both Format and FormatList",
        ),
        (
            WRAP + 'this->Input("a").Follow("b"); this->Input("b").Follow("a");',
            "the Follow chain of 'a'",
        ),
        ("int a = A;", "cannot read A: its value depends on itself"),
        ("int a = K[0];", "cannot read the declaration of K"),
    ],
)
def test_the_evaluator_refuses_what_it_cannot_read(body, message):
    head = "static const int A = A + 1;\nK[2] = {1, 2};\n" + HELPER
    with pytest.raises(SpecError) as err:
        cann.read(opdef(body, head=head))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("#define F(a\nOP_ADD(A);", "<text>:1: cannot read the macro F's parameters"),
        ("#define F(a) a\nint x = F(1;\nOP_ADD(A);", "<text>:2: the macro call F( is never"),
        ("#else\nOP_ADD(A);", "<text>:1: an #else without #if"),
        ("#endif\nOP_ADD(A);", "<text>:1: an #endif without #if"),
        ("#elif 1\nOP_ADD(A);", "<text>:1: an #elif without #if"),
        ("#ifdef X\nOP_ADD(A);\n", "<text>:2: an #if without #endif"),
        ("#define\nOP_ADD(A);", "<text>:1: a #define without a name"),
        ("OP_ADD(Missing);", "<text>:1: cannot read OP_ADD(Missing): no class Missing"),
        (
            "class Base : public OpDef {};\nclass B : public Base {};\nOP_ADD(B);",
            "<text>:2: cannot read class B deriving from Base (not OpDef)",
        ),
        ("#if FOO > 1\n#endif\nOP_ADD(A);", "<text>:1: cannot read the condition #if FOO > 1"),
        (
            opdef("Recurse(1);", members="void Recurse(int n) { Recurse(n); }"),
            "cannot read the recursion of Recurse()",
        ),
    ],
)
def test_file_level_refusals_name_the_line(text, message):
    with pytest.raises(SpecError) as err:
        cann.read(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_preprocessor_branches_and_undef():
    text = opdef(
        """
#ifdef MY_FLAG
        this->Input("flagged").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
#elif defined(OTHER)
        this->Input("other").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
#else
        this->Input("plain").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
#endif
#if 0
        this->Input("never").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
#endif
""",
        head="#define OTHER\n#define MY_FLAG\n#undef MY_FLAG",
    )
    assert [i.name for i in read_one(text).ir.inputs] == ["other"]


@pytest.mark.parametrize(
    "text",
    [
        PROGRAM,
        PER_CHIP,
        opdef(
            """
        this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_NCHW, ge::FORMAT_ND});
        this->Input("sizes").ParamType(OPTIONAL).ValueDepend(OPTIONAL)
            .DataType({ge::DT_INT64, ge::DT_INT64});
        this->Input("xs").ParamType(DYNAMIC).DataTypeList({ge::DT_INT8});
        this->Input("steps").ScalarList().To(ge::DT_INT64);
        this->Output("x").DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_NCHW, ge::FORMAT_ND});
        this->Output("n").DataType({ge::DT_INT64, ge::DT_INT64}).OutputShapeDependOnCompute();
        this->Attr("axis").Int();
        this->Attr("scales").AttrType(OPTIONAL).ListFloat({1.5, 2});
        this->Attr("keep").AttrType(OPTIONAL).ListBool({true});
        this->Attr("dst").AttrType(OPTIONAL).Int(ge::DT_BF16);
        this->Attr("mode").AttrType(OPTIONAL).String("a \\"quoted\\" mode");
"""
        ),
    ],
    ids=["program", "per_chip", "every_fact"],
)
def test_round_trips(text):
    """OpDef -> opdef_cpp -> read is the same op; REG_OP and msopgen JSON, which have no
    value-depend, scalar or output-shape facts, give the same IR less those, and the
    same data types: rows in OpDef and msopgen JSON, a set per tensor in a REG_OP."""
    op = read_one(text)
    exported = opdef_cpp(op)
    assert read_one(exported) == op and op.rows
    assert "OP_ADD(" in exported and 'this->AICore().AddConfig("ascend910b");' in exported
    plain = _without_opdef_facts(op.ir)
    for back, rows in ((read_one(reg_op(op)), False), (read_one(msopgen_json(op)), True)):
        assert _without_opdef_facts(back.ir) == plain and back.dtypes == op.dtypes
        assert back.rows is rows


def _without_opdef_facts(ir):
    from dataclasses import replace

    return replace(
        ir,
        inputs=[Input(i.name, i.kind) for i in ir.inputs],
        outputs=[Output(o.name, o.kind) for o in ir.outputs],
        # msopgen JSON writes an Int holding a data type as GE's number
        attrs=[replace(a, dtype=False) for a in ir.attrs],
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "REG_OP(A).INPUT(x, TensorType({DT_FLOAT, DT_INT8})).INPUT(i, TensorType({DT_INT32}))",
            "these tensors' lists differ or are empty (x: 2, i: 1)",
        ),
        (
            "REG_OP(A).INPUT(x, TensorType({DT_FLOAT})).ATTR(tags, ListString, {})",
            "attr 'tags' is a ListString, which OpDef has no setter for",
        ),
        (
            "REG_OP(A).INPUT(x, TensorType({DT_FLOAT})).ATTR(big, Float, 1e999)",
            "attr 'big': C++ has no literal for inf",
        ),
    ],
)
def test_what_opdef_cannot_state_is_refused(text, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        opdef_cpp(read_one(text))


def test_a_type_attr_is_written_as_opdef_files_write_one():
    """OpDef has no Type attr: ``.Int(ge::DT_X)``, read back as an Int of GE's number that
    holds a data type (torch still takes a ScalarType)."""
    op = read_one("REG_OP(A).INPUT(x, TensorType({DT_FLOAT})).ATTR(dst, Type, DT_INT16)")
    exported = opdef_cpp(op)
    assert 'this->Attr("dst").AttrType(OPTIONAL).Int(ge::DT_INT16);' in exported
    assert read_one(exported).ir.attrs == (Attr("dst", "VT_INT", 6, dtype=True),)
