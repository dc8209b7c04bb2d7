// RowScale (y = x * scale, by rows) in ops-nn's style: the correct tiling, and one twin per
// defect opsdk's tiling run finds (a crash, a refusal of a valid shape, a block dim above
// the cores, tiling data longer than its class), each the correct one but for that line.
#include "row_scale_tiling.h"
#include "../op_kernel/row_scale_tiling_key.h"

#include <cstdio>

namespace optiling {
namespace {
constexpr uint32_t CHUNK = 4096;  // elements of a row per UB chunk
constexpr uint32_t STALE_TILING_BYTES = 64;
enum class Defect { NONE, CRASH, REFUSE, ALL_ROWS, LONG };
}  // namespace

static ge::graphStatus Tile(gert::TilingContext* context, Defect defect)
{
    auto info = context->GetCompileInfo<RowScaleCompileInfo>();
    OP_CHECK_NULL_WITH_CONTEXT(context, info);
    const gert::Shape& x = context->GetInputShape(0)->GetStorageShape();
    uint32_t rows = static_cast<uint32_t>(x.GetDim(0));
    uint32_t cols = static_cast<uint32_t>(x.GetDim(1));
    const float* scale = context->GetAttrs()->GetFloat(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, scale);
    if (defect == Defect::REFUSE && cols > CHUNK) {
        OP_LOGE(context, "cols %u do not fit UB", cols);
        std::printf("cols %u do not fit UB\n", cols);  // to stdout, as group_norm_swish_grad's
        std::fflush(stdout);
        return ge::GRAPH_FAILED;
    }
    uint32_t cores = std::min(rows, info->cores);
    if (defect == Defect::ALL_ROWS) {
        cores = rows;
    }
    RowScaleTilingData tiling;
    tiling.set_rows(rows);
    tiling.set_cols(cols);
    if (defect == Defect::CRASH) {
        tiling.set_rowsPerCore(rows / (rows / info->cores));
    } else {
        tiling.set_rowsPerCore(Ops::Base::CeilDiv(rows, cores));
    }
    uint16_t chunks[3] = {static_cast<uint16_t>(Ops::Base::CeilDiv(cols, CHUNK)), 0, 0};
    tiling.set_chunks(chunks);
    tiling.set_scale(*scale);
    tiling.tail.set_rows(rows % cores);
    tiling.tail.set_chunk(static_cast<uint16_t>(cols % CHUNK));
    context->SetBlockDim(cores);
    bool isHalf = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16;
    context->SetTilingKey(GET_TPL_TILING_KEY(cols > CHUNK ? 1 : 0, isHalf));
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 1024U * 1024U + rows * sizeof(float);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    if (defect == Defect::LONG) {
        context->GetRawTilingData()->SetDataSize(STALE_TILING_BYTES);
    } else {
        context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    }
    return ge::GRAPH_SUCCESS;
}

static ge::graphStatus TilingRowScale(gert::TilingContext* context) { return Tile(context, Defect::NONE); }
static ge::graphStatus TilingRowScaleCrash(gert::TilingContext* context) { return Tile(context, Defect::CRASH); }
static ge::graphStatus TilingRowScaleRefuse(gert::TilingContext* context) { return Tile(context, Defect::REFUSE); }
static ge::graphStatus TilingRowScaleAllRows(gert::TilingContext* context) { return Tile(context, Defect::ALL_ROWS); }
static ge::graphStatus TilingRowScaleLong(gert::TilingContext* context) { return Tile(context, Defect::LONG); }

static ge::graphStatus TilingPrepareRowScale(gert::TilingParseContext* context)
{
    auto info = context->GetCompiledInfo<RowScaleCompileInfo>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    info->cores = platform.GetCoreNumAiv();
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, info->ub);
    if (CheckLogLevel(static_cast<int32_t>(OP), DLOG_DEBUG) == 1) {  // as tiling_base.h asks
        return ge::GRAPH_FAILED;  // a default install does not log at debug level
    }
    uint64_t ub = 0;  // the whole UB through fe::PlatFormInfos, as other tilings ask it:
    context->GetPlatformInfo()->GetLocalMemSize(fe::LocalMemType::UB, ub);
    return ub == info->ub + 256 ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;  // 910B keeps 256 B back
}

IMPL_OP_OPTILING(RowScale).Tiling(TilingRowScale).TilingParse<RowScaleCompileInfo>(TilingPrepareRowScale);
IMPL_OP_OPTILING(RowScaleCrash).Tiling(TilingRowScaleCrash).TilingParse<RowScaleCompileInfo>(TilingPrepareRowScale);
IMPL_OP_OPTILING(RowScaleRefuse).Tiling(TilingRowScaleRefuse).TilingParse<RowScaleCompileInfo>(TilingPrepareRowScale);
IMPL_OP_OPTILING(RowScaleAllRows)
    .Tiling(TilingRowScaleAllRows)
    .TilingParse<RowScaleCompileInfo>(TilingPrepareRowScale);
IMPL_OP_OPTILING(RowScaleLong)
    .Tiling(TilingRowScaleLong)
    .TilingParse<RowScaleCompileInfo>(TilingPrepareRowScale)
    .GenSimplifiedKey(TilingRowScaleLong);  // GE's simplified key, as ops-nn's quant norms register
}  // namespace optiling

using namespace AscendC;  // as 112 of the repositories' tilings do (its host API is not modelled)
