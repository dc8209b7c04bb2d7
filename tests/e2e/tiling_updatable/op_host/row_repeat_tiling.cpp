// RowRepeat's tiling: its workspace stages every repeat of x (k read on the host).
#include "register/op_impl_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
struct RowRepeatTilingData {
    int64_t elements;
    int64_t k;
};

static ge::graphStatus TilingRowRepeat(gert::TilingContext* context)
{
    const gert::Shape& x = context->GetInputShape(0)->GetStorageShape();
    const int64_t* k = context->GetInputTensor(1)->GetData<int64_t>();
    uint32_t bytes = 0;
    ge::TypeUtils::GetDataTypeLength(context->GetInputDesc(0)->GetDataType(), bytes);
    RowRepeatTilingData* tiling = context->GetTilingData<RowRepeatTilingData>();
    tiling->elements = x.GetShapeSize();
    tiling->k = *k;
    context->SetBlockDim(1);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 4096 + x.GetShapeSize() * bytes * (*k);
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(RowRepeat).Tiling(TilingRowRepeat);
}  // namespace optiling
