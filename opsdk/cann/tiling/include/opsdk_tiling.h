// opsdk's own stand-in (the tiling build's, searched before inference's) for the part of
// CANN's gert tiling API and AscendC platform API that op tilings use: gert::TilingContext,
// TilingData, TilingParseContext and platform_ascendc::PlatformAscendC. Written from how
// tiling sources use the API (names, signatures, what a value means); no CANN header is
// copied. What a context reads and writes is opsdk's (opsdk::TilingState), filled and read
// back by opsdk_tiling_entry.cpp for one request.
#pragma once
// What CANN's tiling headers bring in with them, which tiling sources rely on.
#include <array>
#include <cfloat>
// but FLT_EPSILON, which three ops-nn tilings define as a constant of their own
// (dynamic_quant, batch_norm, lp_norm_v2): CANN's headers leave it undefined
#undef FLT_EPSILON
#include <climits>
#include <cmath>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "securec.h"

namespace opsdk {
// One tiling run: the node's storage shapes, the tiling data buffer (its capacity, then a
// guard zone the entry checks), and what the TilingFunc set.
struct TilingState {
  static constexpr size_t kGuard = 256;
  static constexpr uint8_t kGuardByte = 0xA5;
  std::vector<gert::StorageShape> inputs, outputs;
  std::vector<uint8_t> buffer;  // capacity + kGuard bytes
  size_t capacity = 0, data_size = 0;
  uint32_t block_dim = 0, schedule_mode = 0, local_memory = 0;
  uint64_t tiling_key = 0;
  bool atomic = false;
  std::vector<size_t> workspaces;  // as large as the TilingFunc asked
  const void *compile_info = nullptr;
  int32_t deterministic = 0;
  std::string block_dim_at, data_size_at;  // file:line of the call that set each, last
  static std::string At(const char *file, int line) { return std::string(file) + ":" + std::to_string(line); }
};
}  // namespace opsdk

namespace gert {
// A view's strides (elements per step of each dim), which no input here has.
class Stride {
 public:
  size_t GetDimNum() const { return 0; }
  int64_t GetStride(size_t) const { return 0; }
};

class TilingData {
 public:
  explicit TilingData(opsdk::TilingState *state) : state_(state) {}
  void *GetData() { return state_->buffer.data(); }
  const void *GetData() const { return state_->buffer.data(); }
  size_t GetCapacity() const { return state_->capacity; }
  size_t GetDataSize() const { return state_->data_size; }
  void SetDataSize(size_t size, const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
    state_->data_size = size;
    state_->data_size_at = opsdk::TilingState::At(file, line);
  }
  // Appends ``value``'s bytes after the data so far; fails past the capacity.
  template <typename T> ge::graphStatus Append(const T &value) {
    if (state_->data_size + sizeof(T) > state_->capacity) return ge::GRAPH_FAILED;
    std::memcpy(state_->buffer.data() + state_->data_size, &value, sizeof(T));
    state_->data_size += sizeof(T);
    return ge::GRAPH_SUCCESS;
  }
  template <typename T> ge::graphStatus Append(const T *values, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      if (Append(values[i]) != ge::GRAPH_SUCCESS) return ge::GRAPH_FAILED;
    }
    return ge::GRAPH_SUCCESS;
  }
 private:
  opsdk::TilingState *state_;
};

class TilingContext : public ExtendedKernelContext {
 public:
  TilingContext(opsdk::Node *node, opsdk::TilingState *state) : ExtendedKernelContext(node), state_(state), raw_(state) {}
  fe::PlatFormInfos *GetPlatformInfo() const { return &platform_; }
  const StorageShape *GetInputShape(size_t i) const { return At(state_->inputs, i); }
  const StorageShape *GetOptionalInputShape(size_t ir) const { return At(state_->inputs, Instance(ir, 0)); }
  const StorageShape *GetRequiredInputShape(size_t ir) const { return GetOptionalInputShape(ir); }
  const StorageShape *GetDynamicInputShape(size_t ir, size_t k) const { return At(state_->inputs, Instance(ir, k)); }
  const StorageShape *GetOutputShape(size_t i) const { return At(state_->outputs, i); }
  // A tiling gets every input's tensor (its data only where the input is value-depend).
  const Tensor *GetInputTensor(size_t i) const { return At(node_->input_tensors, i); }
  const Tensor *GetOptionalInputTensor(size_t ir) const { return At(node_->input_tensors, Instance(ir, 0)); }
  const Tensor *GetRequiredInputTensor(size_t ir) const { return GetOptionalInputTensor(ir); }
  const Tensor *GetDynamicInputTensor(size_t ir, size_t k) const { return At(node_->input_tensors, Instance(ir, k)); }
  // Inputs are contiguous tensors here: none is a view with strides of its own.
  bool InputIsView(size_t) const { return false; }
  const Stride *GetInputStride(size_t) const { return nullptr; }
  const void *GetCompileInfo() const { return state_->compile_info; }
  template <typename T> const T *GetCompileInfo() const { return static_cast<const T *>(state_->compile_info); }
  TilingData *GetRawTilingData() { return &raw_; }
  // The tiling data as a plain struct: the raw buffer, its data size sizeof(T).
  template <typename T> T *GetTilingData(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (sizeof(T) > state_->capacity) return nullptr;
    raw_.SetDataSize(sizeof(T), file, line);
    return reinterpret_cast<T *>(state_->buffer.data());
  }
  ge::graphStatus SetTilingKey(uint64_t key) { state_->tiling_key = key; return ge::GRAPH_SUCCESS; }
  uint64_t GetTilingKey() const { return state_->tiling_key; }
  ge::graphStatus SetBlockDim(uint32_t dim, const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
    state_->block_dim = dim;
    state_->block_dim_at = opsdk::TilingState::At(file, line);
    return ge::GRAPH_SUCCESS;
  }
  uint32_t GetBlockDim() const { return state_->block_dim; }
  ge::graphStatus SetScheduleMode(uint32_t mode) { state_->schedule_mode = mode; return ge::GRAPH_SUCCESS; }
  ge::graphStatus SetNeedAtomic(bool atomic) { state_->atomic = atomic; return ge::GRAPH_SUCCESS; }
  ge::graphStatus SetLocalMemorySize(uint32_t size) { state_->local_memory = size; return ge::GRAPH_SUCCESS; }
  int32_t GetDeterministic() const { return state_->deterministic; }
  // ``count`` workspace sizes to set (zero until set); the array lives for the run.
  size_t *GetWorkspaceSizes(size_t count) {
    if (state_->workspaces.size() < count) state_->workspaces.resize(count, 0);
    return state_->workspaces.data();
  }
  size_t GetWorkspaceNum() const { return state_->workspaces.size(); }
  const char *GetCompiledJson() const { return "{}"; }
 private:
  opsdk::TilingState *state_;
  TilingData raw_;
  mutable fe::PlatFormInfos platform_;
};

class TilingParseContext : public ExtendedKernelContext {
 public:
  TilingParseContext(opsdk::Node *node, void *compile_info) : ExtendedKernelContext(node), compile_info_(compile_info) {}
  fe::PlatFormInfos *GetPlatformInfo() const { return &platform_; }
  template <typename T> T *GetCompiledInfo() const { return static_cast<T *>(compile_info_); }
  const char *GetCompiledJson() const { return "{}"; }
 private:
  void *compile_info_;
  mutable fe::PlatFormInfos platform_;
};
}  // namespace gert

namespace ge {
// The bytes of ``count`` elements of ``dt`` (-1: no whole number of bytes).
inline int64_t GetSizeInBytes(int64_t count, DataType dt) {
  int size = GetSizeByDataType(dt);
  return size < 0 ? -1 : count * size;
}
}  // namespace ge

// The chip's architecture as platform_ascendc names it (also unqualified in tilings).
enum class NpuArch : uint32_t {
  DAV_1001 = 1001, DAV_2002 = 2002, DAV_2201 = 2201, DAV_3002 = 3002, DAV_3003 = 3003,
  DAV_3102 = 3102, DAV_3113 = 3113, DAV_3510 = 3510, DAV_5102 = 5102, DAV_RESV = 0xFFFFFFFF
};

namespace platform_ascendc {
using ::NpuArch;
enum class SocVersion : uint32_t {
  ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND910_95, ASCEND950, ASCEND910E, ASCEND910_55,
  ASCEND310, ASCEND310P, ASCEND310B, ASCEND310C, ASCEND350, ASCEND610LITE, KIRINX90, KIRIN9030,
  ASCENDXXX, RESERVED_VERSION = 99999
};
enum class CoreMemType : uint32_t { L0_A = 0, L0_B, L0_C, L1, L2, UB, HBM, FB, BT, RESERVED };

// The chip's resources as AscendC's platform API reports them to a tiling (opsdk::TheChip).
class PlatformAscendC {
 public:
  PlatformAscendC() = default;
  explicit PlatformAscendC(fe::PlatFormInfos *) {}
  uint32_t GetCoreNum() const { return Chip().aiv; }
  uint32_t GetCoreNumAic() const { return Chip().aic; }
  uint32_t GetCoreNumAiv() const { return Chip().aiv; }
  uint32_t GetCoreNumVector() const { return Chip().aic == Chip().aiv ? Chip().aiv : 0; }
  // On the A2/A3 chips CANN's answer keeps back 256 B of UB and of L1 (the buffer of
  // Matmul's kfc messages): tilings that add it back (ChunkCat's RESERVE_UB) count on it.
  // fe::PlatFormInfos::GetLocalMemSize gives the whole memory.
  void GetCoreMemSize(CoreMemType type, uint64_t &size) const {
    size = opsdk::MemBytes(static_cast<uint32_t>(type));
    SocVersion soc = GetSocVersion();
    bool a2 = soc == SocVersion::ASCEND910B || soc == SocVersion::ASCEND910_93;
    if (a2 && (type == CoreMemType::UB || type == CoreMemType::L1)) size -= kKfcReserved;
  }
  void GetCoreMemBw(CoreMemType, uint64_t &bandwidth) const { bandwidth = 32; }
  uint32_t GetLibApiWorkSpaceSize() const { return Chip().lib_workspace; }
  SocVersion GetSocVersion() const {
    static const std::map<std::string, SocVersion> known = {
        {"Ascend910B", SocVersion::ASCEND910B}, {"Ascend910_93", SocVersion::ASCEND910_93},
        {"Ascend310P", SocVersion::ASCEND310P}, {"Ascend950", SocVersion::ASCEND950},
        {"Ascend910", SocVersion::ASCEND910}, {"Ascend310B", SocVersion::ASCEND310B}};
    auto found = known.find(opsdk::SocVersion());
    return found == known.end() ? SocVersion::RESERVED_VERSION : found->second;
  }
  NpuArch GetCurNpuArch() const {
    const std::string &arch = Chip().arch;
    return arch.rfind("DAV_", 0) == 0 ? static_cast<NpuArch>(std::stoul(arch.substr(4))) : NpuArch::DAV_RESV;
  }
  // The blocks to launch for ``slices`` vector slices where cube and vector cores are
  // apart (a block is one cube core and its vector cores).
  uint32_t CalcTschBlockDim(uint32_t slices, uint32_t aic, uint32_t aiv) const {
    if (aic == 0 || aiv == 0 || Chip().aic == Chip().aiv) return slices;
    uint32_t ratio = std::max<uint32_t>(1, aiv / aic);
    return (slices + ratio - 1) / ratio;
  }
 private:
  static constexpr uint64_t kKfcReserved = 256;
  static const opsdk::ChipInfo &Chip() { return opsdk::TheChip(); }
};
}  // namespace platform_ascendc

// The host side of AscendC's advanced APIs (their temp-size and tiling functions): the
// namespace that 112 tilings open with `using namespace AscendC;`. Its functions are not
// modelled: a tiling calling one does not compile, and says which.
namespace AscendC {}

// The chip helpers of CANN's op_common (op_host/util/platform_util.h) tilings call, and
// the rounding helpers of mixed operand types (``CeilDiv(rows, 32U)``).
namespace Ops {
namespace Base {
template <typename C> uint32_t GetAivCoreNum(const C *) { return opsdk::TheChip().aiv; }
template <typename C> uint32_t GetAicCoreNum(const C *) { return opsdk::TheChip().aic; }
template <typename C> uint32_t GetUbSize(const C *) { return static_cast<uint32_t>(opsdk::TheChip().ub); }
template <typename C> uint32_t GetUbBlockSize(const C *) { return 32U; }
template <typename C> uint32_t GetVRegSize(const C *) { return 256U; }
// The register-based architectures (Ascend950's) take other tiling paths.
template <typename C> bool IsRegbaseSocVersion(const C *) {
  return opsdk::TheChip().arch == "DAV_3510" || opsdk::TheChip().arch == "DAV_5102";
}
// A scalar's shape as the one-element shape tilings compute with.
inline const gert::Shape &EnsureNotScalar(const gert::Shape &shape) {
  static const gert::Shape one = {1};
  return shape.IsScalar() ? one : shape;
}
template <typename T, typename U> auto CeilDiv(T a, U b) -> std::common_type_t<T, U> {
  using R = std::common_type_t<T, U>;
  return b == 0 ? R(a) : (R(a) + R(b) - 1) / R(b);
}
template <typename T, typename U> auto FloorDiv(T a, U b) -> std::common_type_t<T, U> {
  using R = std::common_type_t<T, U>;
  return b == 0 ? R(a) : R(a) / R(b);
}
template <typename T, typename U> auto CeilAlign(T a, U b) -> std::common_type_t<T, U> {
  using R = std::common_type_t<T, U>;
  return CeilDiv(R(a), R(b)) * R(b);
}
template <typename T, typename U> auto FloorAlign(T a, U b) -> std::common_type_t<T, U> {
  using R = std::common_type_t<T, U>;
  return FloorDiv(R(a), R(b)) * R(b);
}
}  // namespace Base
}  // namespace Ops
