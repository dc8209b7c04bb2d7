// The tiling of TailAdd and TailAddPast: the elements split over the vector cores in
// 32-byte multiples, the last core taking what is left (an unaligned tail).
#include "register/op_impl_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "../op_kernel/tail_add_tiling.h"

namespace optiling {
static ge::graphStatus TilingTailAdd(gert::TilingContext* context)
{
    uint32_t total = static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    uint32_t bytes = 0;
    ge::TypeUtils::GetDataTypeLength(context->GetInputDesc(0)->GetDataType(), bytes);
    uint32_t align = 32 / bytes;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t cores = platform.GetCoreNumAiv();
    uint32_t perCore = (total + cores - 1) / cores;
    perCore = (perCore + align - 1) / align * align;
    TailAddTiling* tiling = context->GetTilingData<TailAddTiling>();
    tiling->total = total;
    tiling->perCore = perCore;
    context->SetBlockDim((total + perCore - 1) / perCore);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(TailAdd).Tiling(TilingTailAdd);
IMPL_OP_OPTILING(TailAddPast).Tiling(TilingTailAdd);
}  // namespace optiling
