// opsdk stand-in: CANN's AscendC platform API (tiling/platform/platform_ascendc.h), which
// tiling helpers an inference source includes keep a pointer to. The class is named,
// without the chip's resources (inference never asks for them).
#pragma once
#include "opsdk_gert.h"

namespace platform_ascendc {
class PlatformAscendC {
 public:
  PlatformAscendC() = default;
  explicit PlatformAscendC(fe::PlatFormInfos *) {}
  uint32_t GetCoreNum() const { return 0; }
  uint32_t GetCoreNumAic() const { return 0; }
  uint32_t GetCoreNumAiv() const { return 0; }
};
}  // namespace platform_ascendc
