// RowScaleClass: RowScale's tiling written as opbase's class frame (Ops::Base::TilingBaseClass,
// as ops-math's circular_pad and lin_space write theirs): one block a row, key 7.
#include "row_scale_tiling.h"
#include "op_host/tiling_base_class.h"

// A constant of the file's own under <cfloat>'s name, as ops-nn's dynamic_quant defines it.
constexpr float FLT_EPSILON = 1e-6f;

namespace {
// A helper of the file's own under error_util.h's name (ops-transformer's rope tilings).
template <typename T>
std::string Shape2String(const T& shape) { return std::to_string(shape.GetDimNum()) + "-d"; }
}  // namespace

namespace optiling {
class RowScaleClassTiling : public Ops::Base::TilingBaseClass {
 public:
  using TilingBaseClass::TilingBaseClass;

 protected:
  bool IsCapable() override { return true; }
  ge::graphStatus GetPlatformInfo() override {
    auto platform = platform_ascendc::PlatformAscendC(context_->GetPlatformInfo());
    aicoreParams_.numBlocks = platform.GetCoreNumAiv();
    return ge::GRAPH_SUCCESS;
  }
  ge::graphStatus GetShapeAttrsInfo() override {
    rows_ = context_->GetInputShape(0)->GetStorageShape().GetDim(0);
    OP_LOGD(context_, "x is %s", Shape2String(context_->GetInputShape(0)->GetStorageShape()).c_str());
    return ge::GRAPH_SUCCESS;
  }
  ge::graphStatus DoOpTiling() override {
    blockDim_ = static_cast<uint32_t>(std::min<uint64_t>(rows_, aicoreParams_.numBlocks));
    return ge::GRAPH_SUCCESS;
  }
  // opbase's half as ops-math's lin_space reads a value-depend input: 1/3 rounds to the
  // nearest half, 0.333251953125, which IsFloatEqual tells from 1/3.
  ge::graphStatus DoLibApiTiling() override {
    float third = static_cast<float>(Ops::Base::fp16_t(1.0f / 3));
    bool rounded = Ops::Base::IsFloatEqual(third, 0.333251953125f) && !Ops::Base::IsFloatEqual(third, 1.0f / 3);
    return rounded && FLT_EPSILON > 0 ? ge::GRAPH_SUCCESS : ge::GRAPH_FAILED;
  }
  uint64_t GetTilingKey() const override { return 7; }
  ge::graphStatus GetWorkspaceSize() override { return ge::GRAPH_SUCCESS; }
  ge::graphStatus PostTiling() override {
    context_->SetBlockDim(blockDim_);
    context_->GetWorkspaceSizes(1)[0] = 0;
    RowScaleTilingData data;
    data.set_rows(static_cast<uint32_t>(rows_));
    data.SaveToBuffer(context_->GetRawTilingData()->GetData(), context_->GetRawTilingData()->GetCapacity());
    context_->GetRawTilingData()->SetDataSize(data.GetDataSize());
    return ge::GRAPH_SUCCESS;
  }

 private:
  int64_t rows_ = 0;
};

static ge::graphStatus TilingRowScaleClass(gert::TilingContext* context)
{
    return RowScaleClassTiling(context).DoTiling();
}

IMPL_OP_OPTILING(RowScaleClass).Tiling(TilingRowScaleClass);
}  // namespace optiling
