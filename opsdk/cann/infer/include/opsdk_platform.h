// opsdk stand-in (inference's): CANN's platform description, a chip's resources by label and
// key. Inference knows none of them: every question is answered "not found". The tiling
// build's own opsdk_platform.h (cann/tiling/include, searched first) answers for a chip.
#pragma once

namespace fe {
class PlatFormInfos {
 public:
  bool GetPlatformRes(const std::string &, const std::string &, std::string &) const { return false; }
  bool GetPlatformResWithLock(const std::string &, const std::string &, std::string &) const { return false; }
  uint32_t GetCoreNum() const { return 0; }
  uint32_t GetCoreNumByType(const std::string &) const { return 0; }
};
}  // namespace fe
