// opsdk stand-in (the tiling build's, searched before inference's): CANN's platform
// description of the chip a tiling runs for (opsdk::TheChip(), filled from the request),
// answered by label and key as fe::PlatFormInfos does for the keys tilings ask.
#pragma once

namespace opsdk {
// The chip a tiling sees: cann/infer/chip.py's resources, the core counts under a limit.
struct ChipInfo {
  std::string arch = "DAV_2201";
  uint32_t aiv = 48, aic = 24;
  uint64_t ub = 196608, l1 = 524288, l0a = 65536, l0b = 65536, l0c = 131072, l2 = 0;
  uint32_t lib_workspace = 16u << 20;
};
ChipInfo &TheChip();
const std::string &SocVersion();
// A memory's bytes by kind, in the order both CANN enums name them (fe::LocalMemType,
// platform_ascendc::CoreMemType): L0_A, L0_B, L0_C, L1, L2, UB; others 0.
inline uint64_t MemBytes(uint32_t kind) {
  const ChipInfo &chip = TheChip();
  const uint64_t bytes[] = {chip.l0a, chip.l0b, chip.l0c, chip.l1, chip.l2, chip.ub};
  return kind < 6 ? bytes[kind] : 0;
}
}  // namespace opsdk

namespace fe {
enum class LocalMemType : uint32_t { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, RESERVED };
class PlatFormInfos {
 public:
  void GetLocalMemSize(const LocalMemType &type, uint64_t &size) const {
    size = opsdk::MemBytes(static_cast<uint32_t>(type));
  }
  bool GetPlatformRes(const std::string &label, const std::string &key, std::string &value) const {
    const opsdk::ChipInfo &chip = opsdk::TheChip();
    if (label == "SoCInfo" && key == "ai_core_cnt") value = std::to_string(chip.aic);
    else if (label == "SoCInfo" && key == "vector_core_cnt") value = std::to_string(chip.aiv);
    else if (label == "SoCInfo" && key == "cube_vector_combine") value = chip.aic == chip.aiv ? "fuse" : "split";
    else if (label == "version" && (key == "SoC_version" || key == "Short_SoC_version")) value = opsdk::SocVersion();
    else if (label == "AICoreSpec" && key == "ub_size") value = std::to_string(chip.ub);
    else if (label == "AICoreSpec" && key == "l1_size") value = std::to_string(chip.l1);
    else return false;
    return true;
  }
  bool GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &value) const {
    return GetPlatformRes(label, key, value);
  }
  // What GetCoreNum reports: the vector cores where cube and vector cores are apart.
  uint32_t GetCoreNum() const { return opsdk::TheChip().aiv; }
  uint32_t GetCoreNumByType(const std::string &type) const {
    return type == "AiCore" ? opsdk::TheChip().aic : opsdk::TheChip().aiv;
  }
};
}  // namespace fe
