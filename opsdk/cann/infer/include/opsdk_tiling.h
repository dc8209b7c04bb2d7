// opsdk stand-in (inference's): tiling's contexts, declared so that headers an inference
// source includes beside its tiling code compile; inference never gets one. The tiling
// build's own opsdk_tiling.h (cann/tiling/include, searched first) runs them.
#pragma once

namespace gert {
class TilingData;
class TilingContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  fe::PlatFormInfos *GetPlatformInfo() const { return nullptr; }
  const StorageShape *GetInputShape(size_t) const { return nullptr; }
  const StorageShape *GetOutputShape(size_t) const { return nullptr; }
  const Tensor *GetInputTensor(size_t) const { return nullptr; }
  template <typename T> const T *GetCompileInfo() const { return nullptr; }
  TilingData *GetRawTilingData() const { return nullptr; }
  uint64_t GetTilingKey() const { return 0; }
  graphStatus SetTilingKey(uint64_t) { return ge::GRAPH_SUCCESS; }
  graphStatus SetBlockDim(uint32_t) { return ge::GRAPH_SUCCESS; }
  size_t *GetWorkspaceSizes(size_t) const { return nullptr; }
};
class TilingData {
 public:
  template <typename T> ge::graphStatus Append(const T &) { return ge::GRAPH_SUCCESS; }
  size_t GetDataSize() const { return 0; }
  void SetDataSize(size_t) {}
  void *GetData() { return nullptr; }
};
class TilingParseContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  fe::PlatFormInfos *GetPlatformInfo() const { return nullptr; }
  template <typename T> T *GetCompiledInfo() const { return nullptr; }
};

}  // namespace gert
