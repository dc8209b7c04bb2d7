"""cann.infer: an op's C++ InferShape / InferDataType found in its project (both
registration styles), compiled against opsdk's stand-in gert headers, called with a
node's shapes, dtypes, attrs and host data, and judged against traced outputs.

The C++ is the project's own (``tests/infer_sources.py`` and here), in the two styles
real projects use. Each file compiles
once per machine (the cache is keyed on contents), so the file costs two g++ runs cold.
"""

from pathlib import Path

import mirrors
import pytest
from infer_sources import BROKEN, infershape

from opsdk._runtime import types
from opsdk.cann import infer
from opsdk.cann.infer.chip import soc_version
from opsdk.cann.infer.disagreements import disagreements
from opsdk.errors import SpecError

F16, F32, I32, I64 = (
    types.DTYPES[n].value for n in ("DT_FLOAT16", "DT_FLOAT", "DT_INT32", "DT_INT64")
)

# ops-nn style: an op_host/*_infershape.cpp registering with IMPL_OP_INFERSHAPE (the
# functions shared with the infer layer's test, and one of this test's own).
EVERYTHING = r"""
// Every way a node reaches InferShape: attrs of each type, a value-depend input's data,
// an optional input and a dynamic one. The output is [sizes..., len(tag), n, bias?, scale>1].
static graphStatus InferShapeEverything(gert::InferShapeContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const gert::TypedContinuousVector<int64_t>* extra = attrs->GetListInt(0);
    const float* scale = attrs->GetFloat(1);
    const bool* flag = attrs->GetBool(2);
    const char* tag = attrs->GetStr(3);
    OP_CHECK_NULL_WITH_CONTEXT(context, extra);
    OP_CHECK_NULL_WITH_CONTEXT(context, tag);
    const gert::Tensor* sizes = context->GetInputTensor(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, sizes);
    const gert::AnchorInstanceInfo* xs = context->GetIrInputInstanceInfo(2);
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    for (int64_t i = 0; i < sizes->GetShapeSize(); ++i) {
        y->AppendDim(sizes->GetData<int32_t>()[i]);
    }
    for (size_t i = 0; i < extra->GetSize(); ++i) {
        y->AppendDim(extra->GetData()[i]);
    }
    y->AppendDim(static_cast<int64_t>(std::strlen(tag)));
    y->AppendDim(static_cast<int64_t>(xs->GetInstanceNum()));
    y->AppendDim(context->GetOptionalInputShape(1) == nullptr ? 0 : 1);
    y->AppendDim(*scale > 1.0f && *flag ? 1 : 0);
    y->AppendDim(context->GetDynamicInputShape(2, 1)->GetDim(0) + Helper());
    return GRAPH_SUCCESS;
}
"""
# A dynamic output: its instances shaped as the dynamic input's, where
# GetIrOutputInstanceInfo says they start; then a required output [instances].
LIST_COPY = r"""
static graphStatus InferShapeListCopy(gert::InferShapeContext* context)
{
    const gert::AnchorInstanceInfo* ys = context->GetIrOutputInstanceInfo(0);
    const gert::AnchorInstanceInfo* count = context->GetIrOutputInstanceInfo(1);
    for (size_t k = 0; k < ys->GetInstanceNum(); ++k) {
        *context->GetOutputShape(ys->GetInstanceStart() + k) = *context->GetDynamicInputShape(0, k);
    }
    gert::Shape* n = context->GetOutputShape(count->GetInstanceStart());
    n->SetDimNum(1);
    n->SetDim(0, static_cast<int64_t>(ys->GetInstanceNum()));
    return GRAPH_SUCCESS;
}
"""
OPS_NN = infershape(
    [
        "InferShapeKeepLast",
        "InferShapeDropLast",
        "InferDtypeFloat",
        "InferDtypeSame",
        "InferShapeTopK",
        "InferDtypeTopKInt32",
        "InferDtypeTopKInt64",
        "InferShapeDoubleUnsigned",
        "InferShapeDoubleSigned",
        "InferShapeSmallOnly",
        "InferShapeTwoOutputs",
        EVERYTHING,
        LIST_COPY,
    ],
    r"""
IMPL_OP_INFERSHAPE(KeepLast).InferShape(InferShapeKeepLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(DropLast).InferShape(InferShapeDropLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(ToFloat).InferShape(InferShapeDropLast).InferDataType(InferDtypeFloat);
IMPL_OP_INFERSHAPE(TopKInt32).InferShape(InferShapeTopK).InferDataType(InferDtypeTopKInt32);
IMPL_OP_INFERSHAPE(TopKInt64)
    .InferShape(InferShapeTopK)
    .InferDataType(InferDtypeTopKInt64);
IMPL_OP_INFERSHAPE(DoubleUnsigned).InferShape(InferShapeDoubleUnsigned);
IMPL_OP(DropLastToo).InferShape(InferShapeDropLast);  // ops-transformer's spelling
IMPL_OP_INFERSHAPE(DoubleSigned).InferShape(InferShapeDoubleSigned);
IMPL_OP_INFERSHAPE(SmallOnly).InferShape(InferShapeSmallOnly);
IMPL_OP_INFERSHAPE(TwoOutputs).InferShape(InferShapeTwoOutputs);
IMPL_OP_INFERSHAPE(Everything).InferShape(InferShapeEverything).InputsDataDependency({0});
IMPL_OP_INFERSHAPE(ListCopy).InferShape(InferShapeListCopy);
""",
    includes=("util/shape_util.h", "helpers.h"),
)

# CANN samples style: the inference in the OpDef file, beside tiling code and the OpDef
# that need CANN's whole host API (only the `namespace ge` blocks are compiled).
SAMPLES = r"""
#include "sample_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    SampleTilingData tiling;
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
static graphStatus InferDataType(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, ge::DT_FLOAT);
    return ge::GRAPH_SUCCESS;
}
}

namespace ops {
class SampleCopy : public OpDef {
public:
    explicit SampleCopy(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc);
    }
};
OP_ADD(SampleCopy);
}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("infer_project")
    (root / "op_host").mkdir()
    (root / "op_host" / "ops_infershape.cpp").write_text(OPS_NN)
    (root / "op_host" / "helpers.h").write_text(
        "#pragma once\ninline int64_t Helper() { return 0; }\n"
    )
    (root / "sample").mkdir()
    (root / "sample" / "sample_copy.cpp").write_text(SAMPLES)
    (root / "sample" / "sample_tiling.h").write_text("#error tiling needs CANN\n")
    (root / "tests" / "ut").mkdir(parents=True)  # a test folder's copy is none of the project's
    (root / "tests" / "ut" / "stub.cpp").write_text(OPS_NN.replace("KeepLast)", "Stub)"))
    return root


@pytest.fixture(scope="module")
def ops_nn(project):
    """The ops-nn style file's library: every op of the file shares it (one compile)."""
    built = infer.build(infer.find("KeepLast", project), project)
    return infer.Library(built.library, project)


def x(*shape, dtype=F16, data=None):
    return infer.Given(dtype, shape, data)


def test_both_registration_styles_are_found_with_their_functions_lines(project):
    found = infer.find_all(project)
    assert {"KeepLast", "TopKInt64", "Everything", "SampleCopy"} <= set(found)
    assert "Stub" not in found  # tests/ folders hold stubs, not the project's inference
    keep = found["KeepLast"]
    assert keep.sources == (project / "op_host" / "ops_infershape.cpp",)
    line = OPS_NN.splitlines().index(
        "static graphStatus InferShapeKeepLast(gert::InferShapeContext* context)"
    )
    assert (keep.infer_shape.name, keep.infer_shape.line) == ("InferShapeKeepLast", line + 1)
    assert keep.infer_dtype.name == "InferDtypeSame" and not keep.extract
    assert found["TopKInt64"].infer_dtype.name == "InferDtypeTopKInt64"  # a chain over lines
    assert found["DoubleUnsigned"].infer_dtype is None  # GE decides the dtype
    assert found["DropLastToo"].infer_shape.name == "InferShapeDropLast"
    sample = found["SampleCopy"]
    assert sample.extract and sample.infer_shape.name == "ge::InferShape"
    assert (
        sample.infer_shape.line
        == SAMPLES.splitlines().index(
            "static graphStatus InferShape(gert::InferShapeContext* context)"
        )
        + 1
    )
    assert infer.find("NoSuchOp", project) is None


def test_every_op_of_a_file_shares_one_library_and_a_second_build_is_cached(project, ops_nn):
    assert {"KeepLast", "DropLast", "Everything"} <= set(ops_nn.ops())
    again = infer.build(infer.find("DropLast", project), project)
    assert again.library == ops_nn.path and again.seconds == 0.0


def test_a_samples_style_opdef_file_compiles_without_its_tiling_code(project):
    inference = infer.find("SampleCopy", project)
    library = infer.Library(infer.build(inference, project).library)
    answer = library.infer("SampleCopy", [[x(2, -1)]], [], 1)
    assert answer.shapes == ((2, -1),) and answer.dtypes == (F32,)
    # held to a fake keeping fp16: the dtype disagreement names both sides
    (found,) = disagreements(answer, [(2, -1)], ["DT_FLOAT16"], compile=True)
    assert (found.kind, found.cpp, found.fake) == ("dtype", "DT_FLOAT", "DT_FLOAT16")


def test_attrs_host_data_optional_and_dynamic_inputs_reach_the_cpp(ops_nn):
    sizes = x(3, dtype=I32, data=(7).to_bytes(4, "little") * 2 + (9).to_bytes(4, "little"))
    inputs = [[sizes], [], [x(5), x(6, 2)]]  # value-depend sizes, no optional, two dynamic
    attrs = [(10, 11), 2.5, True, "abcd"]
    answer = ops_nn.infer("Everything", inputs, attrs, 1)
    assert answer.shape_status == 0, answer.log
    assert answer.shapes == ((7, 7, 9, 10, 11, 4, 2, 0, 1, 6),)
    with_bias = ops_nn.infer("Everything", [[sizes], [x(1)], [x(5), x(6)]], attrs, 1)
    assert with_bias.shapes[0][-3] == 1
    unset = ops_nn.infer("Everything", inputs, [None, 2.5, True, "abcd"], 1)
    assert unset.shape_status != 0 and "extra is nullptr" in unset.log[0]
    unknown = [[infer.Given(I32, (3,), depend=True)], *inputs[1:]]  # its data unknown
    withheld = ops_nn.infer("Everything", unknown, attrs, 1)
    assert withheld.shape_status != 0 and "sizes is nullptr" in withheld.log[0], withheld.log


def test_a_dynamic_output_s_instances_are_told_apart_from_the_next_output_s(ops_nn):
    """Outputs given per IR output (two instances of the dynamic one, one of the next):
    GetIrOutputInstanceInfo places each, as GE lays a dynamic output's instances out."""
    answer = ops_nn.infer("ListCopy", [[x(5), x(6, 2)]], [], (2, 1))
    assert answer.shape_status == 0, answer.log
    assert answer.shapes == ((5,), (6, 2), (2,))


PLANTED = [
    # (op, inputs, attrs, traced output shapes, traced dtypes, compile, kind of finding)
    ("KeepLast", [[x(4, 5)]], [], [(4,)], ["DT_FLOAT16"], False, "shape"),
    ("ToFloat", [[x(4, 5)]], [], [(4,)], ["DT_FLOAT16"], False, "dtype"),
    ("TopKInt32", [[x(4, 5)]], [2], [(4, 2), (4, 2)], ["DT_FLOAT16", "DT_INT64"], False, "dtype"),
    ("DoubleUnsigned", [[x(-1, 5)]], [], [(-1, 5)], [None], True, "unknown-dim"),
    ("SmallOnly", [[x(8, 5)]], [], [(8, 5)], [None], False, "failed"),
    ("TwoOutputs", [[x(8, 5)]], [], [(8, 5)], [None], False, "count"),
]
TWINS = {
    "KeepLast": "DropLast",
    "ToFloat": "DropLast",
    "TopKInt32": "TopKInt64",
    "DoubleUnsigned": "DoubleSigned",
}


@pytest.mark.parametrize("op, inputs, attrs, shapes, dtypes, compile, kind", PLANTED)
def test_a_planted_disagreement_is_found_and_its_correct_twin_passes(
    ops_nn, op, inputs, attrs, shapes, dtypes, compile, kind
):
    answer = ops_nn.infer(op, inputs, attrs, len(shapes))
    found = disagreements(answer, shapes, dtypes, compile=compile)
    assert [f.kind for f in found] == [kind], found
    text = str(found[0])
    assert "C++" in text and "likelier wrong" in text
    if kind == "failed":
        assert "dim 0 is 8, at most 4" in found[0].cpp
        assert f"{ops_nn.root}/op_host/ops_infershape.cpp:" in found[0].cpp
        smaller = [[x(3, 5)]]
        assert (
            disagreements(ops_nn.infer(op, smaller, attrs, 1), [(3, 5)], [None], compile=False)
            == []
        )
    if kind == "count":
        assert found[0].cpp == "infers 2 outputs" and found[0].fake == "returns 1"
    if op in TWINS:
        twin = ops_nn.infer(TWINS[op], inputs, attrs, len(shapes))
        assert disagreements(twin, shapes, dtypes, compile=compile) == [], TWINS[op]


def test_unknown_dims_at_compile_and_run():
    """At compile a symbolic dim must stay -1 and C++ may leave any dim or the rank
    unknown; at run every size is known."""
    answer = infer.Inferred(0, ((-1, 5),), None, (), (), 1)
    assert disagreements(answer, [(-1, 5)], [None], compile=True) == []
    assert disagreements(answer, [(3, 5)], [None], compile=True) == []
    assert [f.kind for f in disagreements(answer, [(3, 5)], [None], compile=False)] == ["shape"]
    specialized = infer.Inferred(0, ((3, 5),), None, (), (), 1)
    (found,) = disagreements(specialized, [(-1, 5)], [None], compile=True)
    assert found.kind == "unknown-dim" and "likelier wrong: the C++" in found.verdict
    rank = infer.Inferred(0, ((-2,),), None, (), (), 1)
    assert disagreements(rank, [(-1, 5)], [None], compile=True) == []
    assert disagreements(rank, [(3, 5)], [None], compile=False)[0].cpp == "unknown rank"


def test_a_file_that_does_not_compile_is_one_line_with_file_line_and_symbol(tmp_path):
    (tmp_path / "broken_infershape.cpp").write_text(BROKEN)
    with pytest.raises(infer.CompileFailure) as failed:
        infer.build(infer.find("Broken", tmp_path), tmp_path)
    message = str(failed.value)
    assert "\n" not in message and "broken_infershape.cpp:5" in message
    assert "GetPlatformInfo" in message and "build.log" in message


# A file whose include chain reaches a CANN header opsdk has no stand-in of.
NEEDS_CANN = r"""
#include "register/op_impl_registry.h"
#include "tiling/only_in_cann.h"
static ge::graphStatus InferShapeNeedsCann(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = gert::Shape({kOnlyInCann});
    return ge::GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(NeedsCann).InferShape(InferShapeNeedsCann);
"""


def test_a_cann_toolkit_s_headers_come_after_opsdk_s_stand_ins(tmp_path, monkeypatch):
    """A fake toolkit laid out as CANN installs (include/, <arch>-linux/include/): what
    opsdk lacks comes from it; what opsdk stands in for stays opsdk's (its contexts are
    what the entry builds), however CANN's own reads."""
    import platform

    home = tmp_path / "Ascend" / "cann"
    arch = home / f"{platform.machine()}-linux" / "include"
    (home / "include" / "register").mkdir(parents=True)
    (arch / "tiling").mkdir(parents=True)
    (arch / "tiling" / "only_in_cann.h").write_text(
        "#pragma once\nconstexpr int kOnlyInCann = 7;\n"
    )
    (home / "include" / "register" / "op_impl_registry.h").write_text("#error CANN's own\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "needs_cann_infershape.cpp").write_text(NEEDS_CANN)
    inference = infer.find("NeedsCann", project)
    for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "OPSDK_CANN_INCLUDE"):
        monkeypatch.delenv(name, raising=False)
    assert infer.header_dirs() == ()
    with pytest.raises(infer.CompileFailure, match="only_in_cann.h: No such file"):
        infer.build(inference, project)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(home))
    assert infer.header_dirs() == (home / "include", arch)
    library = infer.Library(infer.build(inference, project).library)
    assert library.infer("NeedsCann", [], [], 1).shapes == ((7,),)
    library.close()
    assert infer.header_dirs({"ASCEND_TOOLKIT_HOME": str(home)}) == (home / "include", arch)
    named = {"OPSDK_CANN_INCLUDE": f"{arch}:{tmp_path}/other", "ASCEND_HOME_PATH": str(home)}
    assert infer.header_dirs(named) == (arch, tmp_path / "other")


def test_declared_output_dtypes_hold_the_fake_where_there_is_no_infer_data_type():
    from opsdk.cann.infer.disagreements import declared

    allowed = {"y": {"DT_FLOAT"}, "indices": {"DT_INT32"}}
    (found,) = declared(allowed, [("y", "DT_FLOAT16"), ("indices", "DT_INT32")])
    assert (found.kind, found.output, found.cpp) == (
        "declared-dtype",
        0,
        "definition declares DT_FLOAT",
    )
    assert "likelier wrong: the fake" in str(found)
    assert declared(allowed, [("y", "DT_FLOAT"), ("indices", "DT_INT32")]) == []
    (indices,) = declared(allowed, [("y", "DT_FLOAT"), ("indices", "DT_INT64")])
    assert indices.output == 1 and indices.fake == "DT_INT64"
    assert declared({"y": set()}, [("y", "DT_INT8"), ("indices", "DT_INT64")]) == []


CRASHING = infershape(
    ["InferShapeUnguarded"], "IMPL_OP_INFERSHAPE(Unguarded).InferShape(InferShapeUnguarded);"
)


def test_a_crashing_infer_shape_ends_its_worker_not_this_process(tmp_path):
    (tmp_path / "unguarded_infershape.cpp").write_text(CRASHING)
    library = infer.Library(infer.build(infer.find("Unguarded", tmp_path), tmp_path).library)
    with_bias = [[x(3, 4)], [x(5)]]
    assert library.infer("Unguarded", with_bias, [], 1).shapes == ((5, 4),)
    with pytest.raises(infer.Crashed) as crashed:
        library.infer("Unguarded", [[x(3, 4)], []], [], 1)
    assert crashed.value.function == "InferShape"
    assert str(crashed.value) == "the InferShape crashed (signal 11: SIGSEGV)"
    # the next call gets a fresh worker
    assert library.infer("Unguarded", with_bias, [], 1).shapes == ((5, 4),)
    library.close()


BY_CHIP = r"""
#include "register/op_impl_registry.h"
#include "platform/platform_info.h"
// As ops-nn's do: ask the platform which chip, and infer differently on Ascend950.
static ge::graphStatus InferDtypeByChip(gert::InferDataTypeContext* context)
{
    fe::PlatformInfo platform_info;
    fe::OptionalInfo optional_info;
    if (fe::PlatformInfoManager::Instance().GetPlatformInfoWithOutSocVersion(
            platform_info, optional_info) != ge::GRAPH_SUCCESS) {
        return ge::GRAPH_FAILED;
    }
    bool wide = platform_info.str_info.short_soc_version == "Ascend950";
    context->SetOutputDataType(0, wide ? ge::DT_FLOAT : context->GetInputDataType(0));
    return ge::GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(ByChip).InferDataType(InferDtypeByChip);
"""


def test_the_chip_the_cpp_asks_for_is_a_parameter(tmp_path):
    (tmp_path / "by_chip_infershape.cpp").write_text(BY_CHIP)
    library = infer.Library(infer.build(infer.find("ByChip", tmp_path), tmp_path).library)
    assert library.infer("ByChip", [[x(2)]], [], 1).dtypes == (F16,)  # ascend910b
    assert library.infer("ByChip", [[x(2)]], [], 1, chip="ascend950").dtypes == (F32,)
    library.close()


def test_the_chip_is_the_setting_else_the_definition_s_else_atlas_a2():
    assert infer.chip((), {}) == "ascend910b"
    assert infer.chip(("ascend950",), {}) == "ascend950"
    assert infer.chip(("ascend950", "ascend910_93"), {}) == "ascend910_93"  # the reader's
    assert infer.chip(("ascend910b",), {"OPSDK_CANN_CHIP": "ascend950"}) == "ascend950"
    with pytest.raises(SpecError, match="OPSDK_CANN_CHIP='910B' is not a chip"):
        infer.chip((), {"OPSDK_CANN_CHIP": "910B"})
    assert soc_version("ascend910_93") == "Ascend910_93"


FORMATTED = r"""
#include "register/op_impl_registry.h"
#include "log/log.h"
// As ops-nn's 3-D pooling does: the input's origin format decides (NCDHW or NDHWC only).
static ge::graphStatus InferShapeFormatted(gert::InferShapeContext* context)
{
    ge::Format format = context->GetInputDesc(0)->GetOriginFormat();
    // As ops-cv's GridSample reads it: a plain input's tensor, GE's, without data.
    const gert::Tensor* tensor = context->GetInputTensor(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, tensor);
    OP_CHECK_IF(tensor->GetAddr() != nullptr || tensor->GetOriginFormat() != format,
                OP_LOGE(context, "the tensor is not the input's"), return ge::GRAPH_FAILED);
    OP_CHECK_IF(format != ge::FORMAT_NCDHW && format != ge::FORMAT_NDHWC,
                OP_LOGE(context, "format must be NCDHW or NDHWC, got %d", format),
                return ge::GRAPH_FAILED);
    bool same = context->GetOutputDesc(0)->GetOriginFormat() == format;
    *context->GetOutputShape(0) = gert::Shape({format == ge::FORMAT_NCDHW ? 1 : 2, same});
    return ge::GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(Formatted).InferShape(InferShapeFormatted);
"""


def test_an_input_s_format_reaches_the_cpp_and_its_outputs(tmp_path):
    (tmp_path / "formatted_infershape.cpp").write_text(FORMATTED)
    library = infer.Library(infer.build(infer.find("Formatted", tmp_path), tmp_path).library)
    nd = library.infer("Formatted", [[x(1, 2, 3, 4, 5)]], [], 1)
    assert nd.shape_status != 0 and "got 2" in nd.log[0]  # FORMAT_ND
    shape = (1, 2, 3, 4, 5)
    for fmt, first in (("NCDHW", 1), ("NDHWC", 2)):
        answer = library.infer("Formatted", [[infer.Given(F16, shape, format=fmt)]], [], 1)
        assert answer.shapes == ((first, 1),), answer.log
    library.close()


# A project laid out as ops-nn's matmul ops are: the op's file calls a helper a shared
# header declares and the .cpp beside it defines; a header found only by its path's end
# (the project's build adds the folder, as ops-transformer's mc2/3rd).
SHARED_CALLER = infershape(
    [],
    """
IMPL_OP_INFERSHAPE(UsesShared).InferShape(Ops::NN::InferShapeShared);
""",
    includes=("common/op_host/shared_infershape.h", "deep/only_here.h", "inc/more_infershape.h"),
)
SHARED_HEADER = """#pragma once
#include "register/op_impl_registry.h"
namespace Ops::NN { ge::graphStatus InferShapeShared(gert::InferShapeContext* context); }
"""
SHARED_SOURCE = """#include "common/op_host/shared_infershape.h"
#include "inc/more_infershape.h"
#include "shared_tiling.h"
#include "deep/only_here.h"
#include "securec.h"
#include "register/tilingdata_base.h"
#include "op_host/infershape_reduce_util.h"
#include "platform/platform_infos_def.h"
// What real include chains reach: securec, tiling-data declarations, reduce helpers.
BEGIN_TILING_DATA_DEF(SharedTiling)
    TILING_DATA_FIELD_DEF(uint32_t, rows);
    TILING_DATA_FIELD_DEF_ARR(int64_t, 2, dims);
END_TILING_DATA_DEF;
namespace Ops::NN {
ge::graphStatus InferShapeShared(gert::InferShapeContext* context)
{
    int64_t axes[1] = {0};
    int64_t copied[2] = {0, 0};
    const int64_t dims[2] = {kOnlyHere, 3};
    if (memcpy_s(copied, sizeof(copied), dims, sizeof(dims)) != EOK) return ge::GRAPH_FAILED;
    SharedTiling tiling;
    tiling.set_rows(static_cast<uint32_t>(copied[0]));
    gert::Shape x({tiling.get_rows(), copied[1] + More() - 3});
    OpLogSub(OP, DLOG_WARN, context, "reduced over axis %ld", axes[0]);
    return Ops::Base::ReduceDimsWithKeepDims<int64_t>(&x, axes, 1, context->GetOutputShape(0));
}
}
"""


def _shared_project(root):
    host = root / "matmul" / "uses_shared" / "op_host"
    common = root / "matmul" / "common" / "op_host"
    deep = root / "third" / "party" / "deep"
    for folder in (host, common, deep):
        folder.mkdir(parents=True)
    (host / "uses_shared_infershape.cpp").write_text(SHARED_CALLER)
    (common / "shared_infershape.h").write_text(SHARED_HEADER)
    (common / "shared_infershape.cpp").write_text(SHARED_SOURCE)
    (common / "shared_tiling.cpp").write_text("#error a tiling source is not inference\n")
    (common / "shared_tiling.h").write_text("#pragma once\n")
    (deep / "only_here.h").write_text("#pragma once\nconstexpr int64_t kOnlyHere = 5;\n")
    (root / "matmul" / "inc").mkdir()  # ops-transformer's mc2/common: inc/ beside src/
    (root / "matmul" / "src").mkdir()
    (root / "matmul" / "inc" / "more_infershape.h").write_text("#pragma once\nint More();\n")
    (root / "matmul" / "src" / "more_infershape.cpp").write_text("int More() { return 3; }\n")
    return infer.find("UsesShared", root)


def test_a_shared_helper_s_source_and_a_header_found_by_its_path_are_compiled_in(tmp_path):
    inference = _shared_project(tmp_path)
    library = infer.Library(infer.build(inference, tmp_path).library, tmp_path)
    answer = library.infer("UsesShared", [], [], 1)
    assert answer.shapes == ((1, 3),), answer.log
    assert answer.log[0].endswith("reduced over axis 0") and answer.log[0].startswith("W ")
    library.close()
    copied = {p.relative_to(tmp_path).as_posix() for p in infer.project_files(inference, tmp_path)}
    assert copied == {
        "matmul/uses_shared/op_host/uses_shared_infershape.cpp",
        "matmul/common/op_host/shared_infershape.h",
        "matmul/common/op_host/shared_infershape.cpp",
        "matmul/common/op_host/shared_tiling.h",  # its .cpp is tiling, not inference
        "matmul/inc/more_infershape.h",
        "matmul/src/more_infershape.cpp",
        "third/party/deep/only_here.h",
    }


def test_a_header_two_project_files_end_with_is_not_guessed(tmp_path):
    inference = _shared_project(tmp_path)
    (tmp_path / "other" / "deep").mkdir(parents=True)
    (tmp_path / "other" / "deep" / "only_here.h").write_text("#pragma once\n")
    with pytest.raises(infer.CompileFailure, match="deep/only_here.h: No such file"):
        infer.build(inference, tmp_path)


def test_a_repository_s_shared_headers_are_found_from_an_op_s_own_folder(tmp_path):
    """An op's folder given alone (``--from-cann .../op_host/x_def.cpp``) still reaches the
    headers its repository shares (ops-math's ``common/inc``, a project's ``include/``, a
    path from the top), and a package's copy keeps them where the build looks."""
    repo = tmp_path / "repo"
    host = repo / "math" / "foo" / "op_host"
    for folder in (host, repo / "common" / "inc" / "op_api", repo / "include"):
        folder.mkdir(parents=True)
    (repo / "common" / "inc" / "op_api" / "util.h").write_text("#pragma once\n")
    (repo / "common" / "inc" / "reduce.h").write_text("#pragma once\n")
    (repo / "include" / "project.h").write_text("#pragma once\n")
    includes = ("op_api/util.h", "project.h", "common/inc/reduce.h")
    source = "".join(f'#include "{name}"\n' for name in includes)
    (host / "foo_infershape.cpp").write_text(
        source + "IMPL_OP_INFERSHAPE(Foo).InferShape(InferShapeFoo);\n"
    )
    inference = infer.find("Foo", host)
    found = {p.relative_to(repo).as_posix() for p in infer.project_files(inference, host)}
    assert found == {
        "math/foo/op_host/foo_infershape.cpp",
        "common/inc/op_api/util.h",
        "common/inc/reduce.h",
        "include/project.h",
    }


def test_a_reg_op_s_inference_is_found_in_its_op_s_op_host(tmp_path):
    """``--from-cann op/op_graph/x_proto.h``: the C++ is in the sibling ``op_host``."""
    from opsdk.scaffold import cann_infer

    (tmp_path / "op_graph").mkdir()
    (tmp_path / "op_host").mkdir()
    proto = tmp_path / "op_graph" / "foo_proto.h"
    proto.write_text("REG_OP(Foo)\n.INPUT(x, TensorType({DT_FLOAT}))\n.OP_END_FACTORY_REG(Foo)\n")
    (tmp_path / "op_host" / "foo_infershape.cpp").write_text(
        "IMPL_OP_INFERSHAPE(Foo).InferShape(InferShapeFoo);\n"
    )
    inference, root = cann_infer.find(proto, "Foo")
    assert root == tmp_path and inference.sources == (tmp_path / "op_host" / "foo_infershape.cpp",)
    assert cann_infer.find(proto, "Bar") is None


# An old-style REG_OP project (CANN's samples): the prototype in op_proto/inc, the infer
# function on a ge::Operator in op_proto/*.cc. Its output takes x1's dtype.
MATMUL_PROTO = """\
#include "graph/operator_reg.h"
namespace ge {
REG_OP(MatmulLike)
    .INPUT(x1, TensorType({DT_FLOAT16, DT_FLOAT}))
    .INPUT(x2, TensorType({DT_FLOAT16, DT_FLOAT}))
    .OPTIONAL_INPUT(bias, TensorType({DT_FLOAT16, DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_FLOAT16, DT_FLOAT}))
    .ATTR(transpose_x2, Bool, false)
    .OP_END_FACTORY_REG(MatmulLike)
}
"""
MATMUL_INFER = """\
#include "matmul_like.h"
namespace ge {
IMPLEMT_COMMON_INFERFUNC(MatmulLikeInferShape)
{
    Shape x1 = op.GetInputDescByName("x1").GetShape();
    Shape x2 = op.GetInputDescByName("x2").GetShape();
    bool transpose = false;
    (void)op.GetAttr("transpose_x2", transpose);
    TensorDesc y = op.GetOutputDescByName("y");
    y.SetShape(Shape({x1.GetDim(0), x2.GetDim(transpose ? 0 : 1)}));
    y.SetDataType(op.GetInputDescByName("x1").GetDataType());
    (void)op.UpdateOutputDesc("y", y);
    return GRAPH_SUCCESS;
}
IMPLEMT_VERIFIER(MatmulLike, MatmulLikeVerify) { return GRAPH_SUCCESS; }
COMMON_INFER_FUNC_REG(MatmulLike, MatmulLikeInferShape);
VERIFY_FUNC_REG(MatmulLike, MatmulLikeVerify);
}  // namespace ge
"""


def test_an_old_style_reg_op_infer_function_is_read_and_compiled_like_the_new_style(tmp_path):
    from opsdk.scaffold import cann_infer

    (tmp_path / "op_proto" / "inc").mkdir(parents=True)
    proto = tmp_path / "op_proto" / "inc" / "matmul_like.h"
    proto.write_text(MATMUL_PROTO)
    (tmp_path / "op_proto" / "matmul_like.cc").write_text(MATMUL_INFER)
    inference, root = cann_infer.find(proto, "MatmulLike")  # as --from-cann the header
    assert (inference.infer_shape.name, inference.infer_shape.line) == ("MatmulLikeInferShape", 3)
    assert inference.infer_dtype == inference.infer_shape  # one function sets both
    library = infer.Library(infer.build(inference, root).library, root)
    x1, x2 = infer.Given(F16, (2, 3)), infer.Given(F16, (3, 5))
    answer = library.infer("MatmulLike", [[x1], [x2], []], [True], 1)
    assert answer.shapes == ((2, 3),) and answer.dtypes == (F16,), answer.log
    answer = library.infer("MatmulLike", [[x1], [x2], []], [False], 1)
    assert answer.shapes == ((2, 5),) and answer.dtypes == (F16,), answer.log
    library.close()


# Real production infershape files whose include chains reach what the stand-ins grew
# for (read at test time from the public mirrors, never kept): a file, what it needs.
REAL = [
    ("ops-nn", "norm/layer_norm/op_host/layer_norm_infershape.cpp", "LayerNorm"),  # runtime2_util
    ("ops-nn", "norm/euclidean_norm/op_host/euclidean_norm_infershape.cpp", "EuclideanNorm"),
    ("ops-nn", "matmul/batch_mat_mul_v3/op_host/batch_mat_mul_v3_infershape.cpp", "BatchMatMulV3"),
    ("ops-transformer", "mc2/matmul_all_reduce/op_host/matmul_all_reduce_infershape.cpp", None),
]


# ops-math op folders (given alone, as ``--from-cann`` does) whose files need its shared
# headers, each with what it reaches of the stand-ins.
MATH_OP_FOLDERS = [
    ("conversion/pad_v3", "op_api/op_util.h from common/inc"),
    ("conversion/concat", "PRId64"),
    ("math/top_k_v2", "OP_LOGE_WITH_INVALID_ATTR"),
    ("conversion/slice", "a bare op_util.h, found in the repository"),
    ("conversion/squeezev3", "Tensor::GetTensorData"),
    ("conversion/im2col", "ge::GetFormatName"),
    ("math/reduce_prod", "common/inc/... from the top; infer_shape_range_context.h"),
]
# ops-cv op folders (its mirror is fetched, not always here): what each reaches.
CV_OP_FOLDERS = [
    ("image/resize_bicubic_v2", "CompileTimeTensorDesc::GetFormat"),
    ("image/three_interpolate_backward", "OP_LOGE_FOR_INVALID_SHAPE"),
    ("image/dilation2_d_backprop_filter", "exe_graph/runtime/runtime_attrs.h"),
]
# The folders those chains reach, per repository.
REAL_FOLDERS = {
    "ops-nn": ("common", "norm", "matmul"),
    "ops-transformer": ("common", "mc2"),
    "ops-math": tuple(["common", *(f"{d}/op_host" for d, _ in MATH_OP_FOLDERS)]),
    "ops-cv": tuple(["common", *(f"{d}/op_host" for d, _ in CV_OP_FOLDERS)]),
}


@pytest.fixture(scope="module")
def real_repos(tmp_path_factory):
    """The REAL files' folders, copied out of the mirrors on this machine (a test of a
    repository whose mirror is not here skips: :func:`_repo`)."""
    root = tmp_path_factory.mktemp("real_infer")
    for name, folders in REAL_FOLDERS.items():
        repo = mirrors.MIRRORS / f"hicann+{name}" / "repo"
        if repo.is_dir():
            mirrors.archive(repo, root / name, *folders)
    return root


def _repo(real_repos: Path, name: str) -> Path:
    if not (real_repos / name).is_dir():
        pytest.skip(f"the public mirror of hicann/{name} is not on this machine (CI)")
    return real_repos / name


@pytest.mark.parametrize(
    "repo, folder, needs",
    [("ops-math", *f) for f in MATH_OP_FOLDERS] + [("ops-cv", *f) for f in CV_OP_FOLDERS],
)
def test_real_files_compile_from_their_op_s_folder_with_the_repository_s_headers(
    real_repos, repo, folder, needs
):
    root = _repo(real_repos, repo) / folder / "op_host"
    for inference in infer.find_all(root).values():
        library = infer.Library(infer.build(inference, root).library)
        assert inference.op_type in library.ops()
        library.close()


@pytest.mark.parametrize("repo, path, op_type", REAL)
def test_real_files_whose_include_chains_reach_cann_s_other_apis_compile(
    real_repos, repo, path, op_type
):
    root = _repo(real_repos, repo)
    found = infer.find_all(root / path)
    inference = found[op_type] if op_type else next(iter(found.values()))
    library = infer.Library(infer.build(inference, root).library)
    assert inference.op_type in library.ops()
    library.close()


def test_two_threads_building_one_library_each_finish_it(tmp_path, monkeypatch):
    """Two threads of a process building the same library (the kernel run sweep's tilings
    of SwiGlu and SwiGluGrad, one set of sources): each writes a partial of its own, so
    neither moves the other's away (the compiler faked: both write before either moves)."""
    import sys
    import threading

    build = sys.modules["opsdk.cann.infer.build"]  # the module (the package's name is its build)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "same_infershape.cpp").write_text(BROKEN.replace("Broken", "Same"))
    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_toolkit", lambda recipe: tmp_path)
    both = threading.Barrier(2)

    def compile_(command, directory):
        both.wait()
        Path(command[command.index("-o") + 1]).write_bytes(b"library")
        both.wait()

    monkeypatch.setattr(build, "_compile", compile_)
    source = infer.find("Same", tmp_path / "src")
    built, failed = [], []

    def one():
        try:
            built.append(infer.build(source, tmp_path / "src").library)
        except OSError as err:
            failed.append(err)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert failed == [] and len(built) == 2 and built[0] == built[1] and built[0].is_file()


def test_copies_of_one_layout_share_a_library_and_another_layout_gets_its_own(
    tmp_path, monkeypatch
):
    """The library names files relative to the project's top (a crash's frame, a log
    line): a package's copy of a repository's op, laid out otherwise, must not reuse the
    repository's build, or its messages point at a file that is not there (ops-nn's
    SoftmaxV2 tiling, built from a package first, then named under the repository)."""
    import sys

    build = sys.modules["opsdk.cann.infer.build"]
    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "_toolkit", lambda recipe: tmp_path)
    monkeypatch.setattr(
        build, "_compile", lambda command, _: Path(command[command.index("-o") + 1]).touch()
    )
    text = BROKEN.replace("Broken", "Placed")
    built = {}
    for top, folder in [("a", "op_host"), ("b", "op_host"), ("c", "experimental/op/op_host")]:
        (tmp_path / top / folder).mkdir(parents=True)
        (tmp_path / top / folder / "placed_infershape.cpp").write_text(text)
        source = infer.find("Placed", tmp_path / top / folder)
        built[top] = infer.build(source, tmp_path / top).library
    assert built["a"] == built["b"] and built["a"] != built["c"]
