// opsdk stand-in for opbase's op_host/tiling_base_class.h: Ops::Base::TilingBaseClass, the
// frame ops-math's class-based tilings derive from (circular_pad, lin_space, rfft1_d...).
// DoTiling runs the steps in order and stops at the first that does not succeed; a class
// that is not capable answers GRAPH_PARAM_INVALID (the caller tries the next class).
#pragma once
#include <memory>
#include <sstream>
#include <string>

#include "opsdk_gert.h"
#include "tiling/platform/platform_ascendc.h"

namespace Ops {
namespace Base {
struct AiCoreParams {
  uint64_t ubSize = 0;
  uint64_t numBlocks = 0;
  uint64_t aicNum = 0;
  uint64_t l1Size = 0;
  uint64_t l0aSize = 0;
  uint64_t l0bSize = 0;
  uint64_t l0cSize = 0;
};

struct CompileInfoCommon {
  uint32_t aivNum;
  uint32_t aicNum;
  uint64_t ubSize;
  uint64_t l1Size;
  uint64_t l0aSize;
  uint64_t l0bSize;
  uint64_t l0cSize;
  uint64_t l2CacheSize;
  int64_t coreNum;
  int32_t socVersion;
  uint32_t rsvd;
};

class TilingBaseClass {
 public:
  explicit TilingBaseClass(gert::TilingContext *context) : context_(context) {}
  virtual ~TilingBaseClass() = default;

  ge::graphStatus DoTiling() {
    if (context_ == nullptr) return ge::GRAPH_FAILED;
    ge::graphStatus status = GetShapeAttrsInfo();
    if (status == ge::GRAPH_SUCCESS) status = GetPlatformInfo();
    if (status != ge::GRAPH_SUCCESS) return status;
    if (!IsCapable()) return ge::GRAPH_PARAM_INVALID;
    for (auto step : {&TilingBaseClass::DoOpTiling, &TilingBaseClass::DoLibApiTiling,
                      &TilingBaseClass::GetWorkspaceSize, &TilingBaseClass::PostTiling}) {
      status = (this->*step)();
      if (status != ge::GRAPH_SUCCESS) return status;
    }
    context_->SetTilingKey(GetTilingKey());
    DumpTilingInfo();
    return ge::GRAPH_SUCCESS;
  }

  virtual void Reset(gert::TilingContext *context) { context_ = context; }

 protected:
  virtual bool IsCapable() = 0;
  virtual ge::graphStatus GetPlatformInfo() = 0;
  virtual ge::graphStatus GetShapeAttrsInfo() = 0;
  virtual ge::graphStatus DoOpTiling() = 0;
  virtual ge::graphStatus DoLibApiTiling() = 0;
  [[nodiscard]] virtual uint64_t GetTilingKey() const = 0;
  virtual ge::graphStatus GetWorkspaceSize() = 0;
  virtual ge::graphStatus PostTiling() = 0;
  virtual void DumpTilingInfo() {}

  // The blocks a launch takes when each AI core pairs with (aiv / aic) vector cores.
  static uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) {
    if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
    uint32_t ratio = aivCoreNum / aicCoreNum;
    return (sliceNum + ratio - 1) / ratio;
  }

  template <typename T>
  [[nodiscard]] std::string GetShapeDebugStr(const T &shape) const {
    std::ostringstream text;
    text << "[";
    for (size_t i = 0; i < shape.GetDimNum(); ++i) text << (i ? ", " : "") << shape.GetDim(i);
    return text.str() + "]";
  }
  [[nodiscard]] std::string GetTensorDebugStr(const gert::StorageShape *shape,
                                              const gert::CompileTimeTensorDesc *) {
    return shape == nullptr ? "nil " : GetShapeDebugStr(shape->GetStorageShape());
  }
  [[nodiscard]] std::string GetTilingContextDebugStr() { return ""; }
  [[nodiscard]] std::string GetTilingDataDebugStr() const { return ""; }

  gert::TilingContext *context_ = nullptr;
  std::unique_ptr<platform_ascendc::PlatformAscendC> ascendcPlatform_{nullptr};
  uint32_t blockDim_{0};
  uint64_t workspaceSize_{0};
  uint64_t tilingKey_{0};
  AiCoreParams aicoreParams_;
};
}  // namespace Base
}  // namespace Ops
