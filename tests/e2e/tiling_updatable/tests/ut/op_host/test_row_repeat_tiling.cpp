// RowRepeat's own host tiling tests (gtest, in CANN's TilingContextPara form): the specs
// opsdk new writes take their smallest cases, named after them.
#include <gtest/gtest.h>
#include "tiling_context_faker.h"
#include "tiling_case_executor.h"

class RowRepeatTiling : public testing::Test {};

TEST_F(RowRepeatTiling, row_repeat_fp16_wide)
{
    std::vector<int64_t> k = {3};
    gert::TilingContextPara tilingContextPara("RowRepeat",
        {{{{8, 1000}, {8, 1000}}, ge::DT_FLOAT16, ge::FORMAT_ND},
         {{{1}, {1}}, ge::DT_INT64, ge::FORMAT_ND, true, k.data()}},
        {{{{24, 1000}, {24, 1000}}, ge::DT_FLOAT16, ge::FORMAT_ND}}, &compileInfo);
    ExecuteTestCase(tilingContextPara, ge::GRAPH_SUCCESS, 0);
}

TEST_F(RowRepeatTiling, row_repeat_fp32_small)
{
    std::vector<int64_t> k = {2};
    gert::TilingContextPara tilingContextPara("RowRepeat",
        {{{{4, 40}, {4, 40}}, ge::DT_FLOAT, ge::FORMAT_ND},
         {{{1}, {1}}, ge::DT_INT64, ge::FORMAT_ND, true, k.data()}},
        {{{{8, 40}, {8, 40}}, ge::DT_FLOAT, ge::FORMAT_ND}}, &compileInfo);
    ExecuteTestCase(tilingContextPara, ge::GRAPH_SUCCESS, 0);
}
