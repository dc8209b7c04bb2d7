"""An op's own host tiling tests read as tiling cases (opsdk.cann.ut_cases), on a planted
op folder in both forms CANN's repositories write them."""

from __future__ import annotations

import struct
from pathlib import Path

from opsdk import cann
from opsdk._runtime import types
from opsdk.cann import ut_cases

PROTO = """
REG_OP(NormLike)
    .INPUT(x, TensorType({DT_FLOAT16, DT_FLOAT}))
    .INPUT(gamma, TensorType({DT_FLOAT16, DT_FLOAT}))
    .OPTIONAL_INPUT(beta, TensorType({DT_FLOAT16, DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_FLOAT16, DT_FLOAT}))
    .OUTPUT(rstd, TensorType({DT_FLOAT}))
    .REQUIRED_ATTR(num_groups, Int)
    .ATTR(eps, Float, 0.0001)
    .ATTR(axes, ListInt, {-1})
    .ATTR(mode, String, "a")
    .OP_END_FACTORY_REG(NormLike)
REG_OP(PadLike)
    .INPUT(x, TensorType({DT_FLOAT16}))
    .INPUT(paddings, TensorType({DT_INT64}))
    .OUTPUT(y, TensorType({DT_FLOAT16}))
    .ATTR(mode, Bool, false)
    .OP_END_FACTORY_REG(PadLike)
"""

# the TilingContextFaker form: StorageShape variables, NodeInputTd, NodeAttrs
FAKER = """
TEST_F(NormLikeTiling, norm_like_fp32)
{
    const int64_t hidden = 32;
    gert::StorageShape x_shape = {{4, hidden * 2}, {4, hidden * 2}};
    gert::StorageShape gamma_shape = {{hidden * 2}, {hidden * 2}};
    gert::StorageShape y_shape = {{4, 64}, {4, 64}};
    gert::StorageShape rstd_shape = {{4, 1}, {4, 1}};
    std::string op_type("NormLike");
    auto tiling_func = gert::OpImplRegistry::GetInstance().GetOpImpl(op_type.c_str())->tiling;
    auto holder = gert::TilingContextFaker()
                      .NodeIoNum(2, 2)
                      .IrInstanceNum({1, 1, 1})
                      .InputShapes({&x_shape, &gamma_shape, nullptr})
                      .OutputShapes({&y_shape, &rstd_shape})
                      .NodeInputTd(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeInputTd(1, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeOutputTd(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeOutputTd(1, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeAttrs({{"numGroups", Ops::NN::AnyValue::CreateFrom<int64_t>(2)},
                                  {"epsilon", Ops::NN::AnyValue::CreateFrom<float>(1)},
                                  {"axes", AnyValue::CreateFrom<std::vector<int64_t>>({0, 1})}})
                      .Build();
    EXPECT_EQ(tiling_func(tiling_context), ge::GRAPH_SUCCESS);
}

TEST_F(NormLikeTiling, norm_like_refused)
{
    gert::StorageShape x_shape = {{4}, {4}};
    std::string op_type("NormLike");
    auto holder = gert::TilingContextFaker().InputShapes({&x_shape}).Build();
    EXPECT_EQ(tiling_func(tiling_context), ge::GRAPH_FAILED);
}

TEST_F(PadLikeTiling, pad_like_faker_const_input)
{
    gert::StorageShape x_shape = {{2, 3}, {2, 3}};
    gert::StorageShape p_shape = {{2}, {2}};
    int64_t pads[2] = {1, 1};
    SetConstInput(1, DT_INT64, pads, 2, const_tensors);
    auto tiling_func = gert::OpImplRegistry::GetInstance().GetOpImpl("PadLike")->tiling;
    auto holder = gert::TilingContextFaker()
                      .InputShapes({&x_shape, &p_shape})
                      .OutputShapes({&x_shape})
                      .NodeInputTd(0, ge::DT_FLOAT16, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeInputTd(1, ge::DT_INT64, ge::FORMAT_ND, ge::FORMAT_ND)
                      .NodeOutputTd(0, ge::DT_FLOAT16, ge::FORMAT_ND, ge::FORMAT_ND)
                      .ConstInput(const_tensors)
                      .Build();
}

void RunNormLike(gert::StorageShape& x_shape)
{
    auto holder = gert::TilingContextFaker().InputShapes({&x_shape}).Build();
}

TEST_F(NormLikeTiling, norm_like_through_a_helper)
{
    gert::StorageShape x_shape = {{8, 8}, {8, 8}};
    RunNormLike(x_shape);
}
"""

# the TilingContextPara form: nested initializers, a const input's host data, a helper
# function the test calls, the file's constants
PARA = """
#define ROWS 5
// a small case
TEST_F(PadLikeTiling, pad_like_small)
{
    optiling::PadLikeCompileInfo compileInfo = {64, 262144};
    std::vector<int64_t> constValue = {1, 1, 2, 2};
    gert::TilingContextPara tilingContextPara("PadLike",
        {{{{4, 8}, {4, 8}}, ge::DT_FLOAT16, ge::FORMAT_ND},
         {{{4}, {4}}, ge::DT_INT64, ge::FORMAT_ND, true, constValue.data()}},
        {{{{6, 12}, {6, 12}}, ge::DT_FLOAT16, ge::FORMAT_ND},},
        &compileInfo);
    ExecuteTestCase(tilingContextPara, ge::GRAPH_SUCCESS, 1, "1 2 ", {0});
}

TEST_F(PadLikeTiling, pad_like_bad_dtype)
{
    gert::TilingContextPara tilingContextPara("PadLike",
        {{{{4, 8}, {4, 8}}, ge::DT_INT64, ge::FORMAT_ND}}, {}, &compileInfo);
    ExecuteTestCase(tilingContextPara, ge::GRAPH_FAILED);
}

void RunPad(int64_t rows, std::vector<int64_t> range, ge::DataType dtype, ge::graphStatus result)
{
    int64_t cols = range[1] - range[0];
    gert::TilingContextPara tilingContextPara("PadLike",
        {{{{rows, cols}, {rows, cols}}, dtype, ge::FORMAT_ND},
         {{{4}, {4}}, ge::DT_INT64, ge::FORMAT_ND}},
        {{{{rows, cols * 2}, {rows, cols * 2}}, dtype, ge::FORMAT_ND}},
        {gert::TilingContextPara::OpAttr("mode", Ops::Math::AnyValue::CreateFrom(true))},
        &compileInfo);
    ExecuteTestCase(tilingContextPara, result);
}

TEST_F(PadLikeTiling, pad_like_through_a_helper)
{
    RunPad(ROWS, {3, 7}, ge::DT_FLOAT16, ge::GRAPH_SUCCESS);
}

TEST_F(PadLikeTiling, pad_like_rows_unknown)
{
    RunPad(rows, {3, 7}, ge::DT_FLOAT16, ge::GRAPH_SUCCESS);  // a name bound to itself
}

TEST_F(PadLikeTiling, pad_like_refused_through_a_helper)
{
    RunPad(ROWS, {3, 7}, ge::DT_INT8, ge::GRAPH_FAILED);
}

TEST_F(PadLikeTiling, pad_like_large)
{
    gert::TilingContextPara tilingContextPara("PadLike",
        {{{{400, 800}, {400, 800}}, ge::DT_FLOAT16, ge::FORMAT_ND},
         {{{4}, {4}}, ge::DT_INT64, ge::FORMAT_ND}},
        {{{{400, 800}, {400, 800}}, ge::DT_FLOAT16, ge::FORMAT_ND}},
        &compileInfo);
    ExecuteTestCase(tilingContextPara, ge::GRAPH_SUCCESS);
}
"""


def _planted(tmp_path: Path) -> Path:
    """An op folder holding both test files, and another chip's copy to be left out."""
    host = tmp_path / "op" / "tests" / "ut" / "op_host"
    (host / "arch35").mkdir(parents=True)
    (host / "test_norm_like_tiling.cpp").write_text(FAKER)
    (host / "test_pad_like_tiling.cpp").write_text(PARA)
    (host / "test_norm_like_infershape.cpp").write_text(FAKER)  # not a tiling test
    (host / "arch35" / "test_pad_like_tiling.cpp").write_text(PARA.replace("{4, 8}", "{5, 8}"))
    # what the reader cannot parse gives no case, never an error: an unclosed initializer,
    # an unclosed test body, a tensor whose dtype the test leaves unset
    broken = (
        FAKER[: FAKER.index("TEST_F(PadLikeTiling")]
        .replace("{{4, 1}, {4, 1}}", "{{4, 1}, {4, 1}")
        .replace(".NodeInputTd(1, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND)", "")
    )
    unclosed = 'TEST_F(PadLikeTiling, cut)\n{\n    gert::TilingContextPara p("PadLike", {{{{4}'
    (host / "test_norm_like_broken_tiling.cpp").write_text(broken + unclosed)
    return tmp_path / "op"


def _dtype(name: str) -> int:
    return types.DTYPES[name].value


def test_faker_form_maps_onto_the_definition(tmp_path):
    folder = _planted(tmp_path)
    norm = cann.read(PROTO, ["NormLike"])[0]
    (case,) = ut_cases.cases(norm, folder)  # the refused test and the helper's give none
    x, gamma, beta = case.inputs
    assert [g.shape for g in (*x, *gamma)] == [(4, 64), (64,)]  # hidden * 2 evaluated
    assert beta == ()  # its nullptr shape: the optional input absent
    assert {g.dtype for g in (*x, *gamma)} == {_dtype("DT_FLOAT")}
    assert [o.shape for o in case.outputs] == [(4, 64), (4, 1)]
    # by position as the tiling reads them (whatever the test names them), each as its C++
    # type makes it; the attrs past the test's at their defaults
    assert case.attrs == (2, 1.0, (0, 1), "a")
    assert str(case).startswith("test_norm_like_tiling.cpp:2 norm_like_fp32: inputs [4, 64]")
    six = cann.read(PROTO.replace('.ATTR(mode, String, "a")', ""), ["NormLike"])[0]
    assert len(ut_cases.cases(six, folder)[0].attrs) == 3
    two = cann.read(
        PROTO.replace(".ATTR(axes, ListInt, {-1})", "").replace('.ATTR(mode, String, "a")', ""),
        ["NormLike"],
    )[0]
    assert ut_cases.cases(two, folder) == []  # more attrs than the definition has


def test_para_form_gives_host_data_and_smallest_first(tmp_path):
    folder = _planted(tmp_path)
    pad = cann.read(PROTO, ["PadLike"])[0]
    # arch35's copy and the failing tests (one through the helper) left out
    faker, helped, small, large = ut_cases.cases(pad, folder)
    # a Faker test's SetConstInput: the input's host data
    assert faker.inputs[1][0].data == struct.pack("<2q", 1, 1)
    (x,), (paddings,) = small.inputs
    assert x.shape == (4, 8) and x.dtype == _dtype("DT_FLOAT16")
    assert paddings.data == struct.pack("<4q", 1, 1, 2, 2) and paddings.depend
    assert small.outputs[0].shape == (6, 12)
    assert large.inputs[0][0].shape == (400, 800) and large.inputs[1][0].data is None
    # the helper's parameters bound to the call's arguments, arithmetic on a vector's items
    assert helped.inputs[0][0].shape == (5, 4) and helped.outputs[0].shape == (5, 8)
    assert (helped.attrs, small.attrs) == ((True,), (False,))  # OpAttr, CreateFrom(true)
    assert str(helped).startswith("test_pad_like_tiling.cpp:35 pad_like_through_a_helper")
    assert ut_cases.elements(small) < ut_cases.elements(large)


def test_a_node_of_another_op_or_unmapped_gives_no_case(tmp_path):
    folder = _planted(tmp_path)
    pad = cann.read(PROTO, ["PadLike"])[0]
    other = cann.read(PROTO.replace("PadLike", "Other"), ["Other"])[0]
    assert ut_cases.cases(other, folder) == []
    assert len(ut_cases.cases(pad, folder, folder, tmp_path / "nothing")) == 4  # each once
    # three inputs where the definition has two: not this definition's node
    (own,) = [c for c in ut_cases.read(folder / "tests/ut/op_host/test_pad_like_tiling.cpp")][:1]
    wider = cann.read(
        PROTO.replace(
            ".INPUT(paddings", ".INPUT(more, TensorType({DT_INT64}))\n    .INPUT(paddings"
        ),
        ["PadLike"],
    )[0]
    assert ut_cases._mapped(own, wider) is None
    assert ut_cases.test_files(tmp_path / "nothing") == []
    assert ut_cases.folder_of(folder / "op_host" / "arch22" / "pad_like_tiling.cpp") == folder
    # instance counts not per IR input (DeepNormGrad's tests say {6}): one each instead
    said = ut_cases.OwnCase("PadLike", own.inputs, own.outputs, (), (2,), "")
    assert [len(i) for i in ut_cases._mapped(said, pad).inputs] == [1, 1]
