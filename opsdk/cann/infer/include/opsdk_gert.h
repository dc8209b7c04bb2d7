// opsdk's own stand-in for the part of CANN's gert/ge runtime API that shape and dtype
// inference (InferShape / InferDataType) uses. Written from the API's documented facts
// (names, signatures, semantics); no CANN header is copied. The data behind a context is
// opsdk's own (opsdk::Node), filled by opsdk_infer_entry.cpp from Python's request.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cinttypes>  // PRId64 and its kin, which the log lines' formats use
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "opsdk_dtypes.h"  // ge::DataType and ge::Format, generated from opsdk's tables

namespace ge {
using graphStatus = uint32_t;
using char_t = char;
using Status = uint32_t;
constexpr Status SUCCESS = 0;
constexpr Status FAILED = 0xFFFFFFFF;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649;
constexpr graphStatus GRAPH_PARAM_OUT_OF_RANGE = 50331650;
constexpr int64_t UNKNOWN_DIM = -1;
constexpr int64_t UNKNOWN_DIM_NUM = -2;
const std::vector<int64_t> UNKNOWN_SHAPE = {-1};
const std::vector<int64_t> UNKNOWN_RANK = {-2};
inline Format GetPrimaryFormat(int32_t format) { return static_cast<Format>(format & 0xff); }
class AscendString {
 public:
  AscendString(const char *text = "") : text_(text == nullptr ? "" : text) {}
  const char *GetString() const { return text_.c_str(); }
 private:
  std::string text_;
};
class TypeUtils {
 public:
  static std::string DataTypeToSerialString(DataType dt) { return opsdk_dtype_name(dt); }
  static AscendString DataTypeToAscendString(DataType dt) { return AscendString(opsdk_dtype_name(dt).c_str()); }
  static AscendString FormatToAscendString(Format f) { return AscendString(std::to_string(static_cast<int>(f)).c_str()); }
  static std::string FormatToSerialString(Format f) { return std::to_string(static_cast<int>(f)); }
  static bool GetDataTypeLength(DataType dt, uint32_t &length) {
    int size = opsdk_dtype_size(dt);
    if (size < 0) return false;
    length = static_cast<uint32_t>(size);
    return true;
  }
};
// Bytes per element (-1: no whole number of bytes).
inline int GetSizeByDataType(DataType dt) { return opsdk_dtype_size(dt); }
inline bool MulOverflow(int64_t a, int64_t b, int64_t &out) { return __builtin_mul_overflow(a, b, &out); }
inline bool AddOverflow(int64_t a, int64_t b, int64_t &out) { return __builtin_add_overflow(a, b, &out); }
}  // namespace ge

// CANN's platform description (fe::PlatFormInfos): opsdk_platform.h, a stub here; the
// tiling build has its own, with a chip's resources.
#include <opsdk_platform.h>  // <>: the first on the search path (the tiling build has its own)

namespace gert {
using ge::graphStatus;

class Shape {
 public:
  static constexpr size_t kMaxDimNum = 25;
  Shape() : dim_num_(0), dims_{} {}
  Shape(std::initializer_list<int64_t> dims) : Shape() { for (int64_t d : dims) AppendDim(d); }
  size_t GetDimNum() const { return dim_num_; }
  void SetDimNum(size_t n) { dim_num_ = std::min(n, kMaxDimNum); }
  int64_t GetDim(size_t i) const { return i < kMaxDimNum ? dims_[i] : INT64_MIN; }
  void SetDim(size_t i, int64_t v) { if (i < kMaxDimNum) dims_[i] = v; }
  Shape &AppendDim(int64_t v) { if (dim_num_ < kMaxDimNum) dims_[dim_num_++] = v; return *this; }
  const int64_t &operator[](size_t i) const { return dims_[i]; }
  int64_t &operator[](size_t i) { return dims_[i]; }
  bool IsScalar() const { return dim_num_ == 0; }
  void SetScalar() { dim_num_ = 0; }
  int64_t GetShapeSize() const {
    int64_t size = 1;
    for (size_t i = 0; i < dim_num_; ++i) {
      if (dims_[i] < 0 || ge::MulOverflow(size, dims_[i], size)) return -1;
    }
    return size;
  }
  bool operator==(const Shape &o) const {
    if (dim_num_ != o.dim_num_) return false;
    for (size_t i = 0; i < dim_num_; ++i) if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape &o) const { return !(*this == o); }
 private:
  size_t dim_num_;
  int64_t dims_[kMaxDimNum];
};

class StorageShape {
 public:
  StorageShape() = default;
  StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
      : origin_(origin), storage_(storage) {}
  const Shape &GetOriginShape() const { return origin_; }
  const Shape &GetStorageShape() const { return storage_; }
  const Shape &GetShape() const { return storage_; }
  Shape &MutableOriginShape() { return origin_; }
  Shape &MutableStorageShape() { return storage_; }
  bool operator==(const StorageShape &o) const { return origin_ == o.origin_ && storage_ == o.storage_; }
  bool operator!=(const StorageShape &o) const { return !(*this == o); }
 private:
  Shape origin_, storage_;
};

class StorageFormat {
 public:
  StorageFormat(ge::Format format = ge::FORMAT_ND) : format_(format) {}
  ge::Format GetOriginFormat() const { return format_; }
  ge::Format GetStorageFormat() const { return format_; }
 private:
  ge::Format format_;
};

// Where a tensor's data is (a host address here).
class TensorData {
 public:
  explicit TensorData(const void *addr = nullptr) : addr_(addr) {}
  void *GetAddr() const { return const_cast<void *>(addr_); }  // CANN's TensorAddress
 private:
  const void *addr_;
};

// A tensor's shape as Tensor::GetShape gives it: a storage shape (origin and storage the
// same here), which tilings also read as a plain shape.
class TensorShape : public Shape {
 public:
  TensorShape(const Shape &shape = {}) : Shape(shape) {}
  const Shape &GetOriginShape() const { return *this; }
  const Shape &GetStorageShape() const { return *this; }
};

// An input's tensor: its shape, dtype, format and (a value-depend input's) host data.
class Tensor {
 public:
  Tensor() = default;
  Tensor(const Shape &shape, ge::DataType dt, const void *data, ge::Format format = ge::FORMAT_ND)
      : shape_(shape), dt_(dt), data_(data), format_(format), tensor_data_(data) {}
  const Shape &GetOriginShape() const { return shape_; }
  const Shape &GetStorageShape() const { return shape_; }
  const TensorShape &GetShape() const { return shape_; }
  int64_t GetShapeSize() const { return shape_.GetShapeSize(); }
  size_t GetDimNum() const { return shape_.GetDimNum(); }
  ge::DataType GetDataType() const { return dt_; }
  ge::Format GetOriginFormat() const { return format_; }
  ge::Format GetStorageFormat() const { return format_; }
  template <typename T> const T *GetData() const { return static_cast<const T *>(data_); }
  const void *GetAddr() const { return data_; }
  const TensorData &GetTensorData() const { return tensor_data_; }
 private:
  TensorShape shape_;
  ge::DataType dt_ = ge::DT_UNDEFINED;
  const void *data_ = nullptr;
  ge::Format format_ = ge::FORMAT_ND;
  TensorData tensor_data_;
};

class ContinuousVector {
 public:
  size_t GetSize() const { return size_; }
  size_t GetCapacity() const { return size_; }
  const void *GetData() const { return data_; }
 protected:
  size_t size_ = 0;
  const void *data_ = nullptr;
};

template <typename T>
class TypedContinuousVector : public ContinuousVector {
 public:
  TypedContinuousVector(const void *data, size_t size) { data_ = data; size_ = size; }
  const T *GetData() const { return static_cast<const T *>(data_); }
};

class RuntimeAttrs {
 public:
  template <typename T> const T *GetAttrPointer(size_t i) const {
    return reinterpret_cast<const T *>(GetPointerByIndex(i));
  }
  const int64_t *GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
  const float *GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
  const bool *GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
  const char *GetStr(size_t i) const { return GetAttrPointer<char>(i); }
  const TypedContinuousVector<int64_t> *GetListInt(size_t i) const {
    return GetAttrPointer<TypedContinuousVector<int64_t>>(i);
  }
  const TypedContinuousVector<float> *GetListFloat(size_t i) const {
    return GetAttrPointer<TypedContinuousVector<float>>(i);
  }
  const TypedContinuousVector<bool> *GetListBool(size_t i) const {
    return GetAttrPointer<TypedContinuousVector<bool>>(i);
  }
  size_t GetAttrNum() const { return pointers.size(); }
  const void *GetPointerByIndex(size_t i) const { return i < pointers.size() ? pointers[i] : nullptr; }
  std::vector<const void *> pointers;  // opsdk's: one per IR attr, in IR order
};

class AnchorInstanceInfo {
 public:
  AnchorInstanceInfo(size_t start, size_t num) : start_(start), num_(num) {}
  size_t GetInstanceStart() const { return start_; }
  size_t GetInstanceNum() const { return num_; }
 private:
  size_t start_, num_;
};

class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const { return dt; }
  void SetDataType(ge::DataType value) { dt = value; }
  ge::Format GetOriginFormat() const { return format; }
  ge::Format GetStorageFormat() const { return format; }
  StorageFormat GetFormat() const { return StorageFormat(format); }
  ge::DataType dt = ge::DT_UNDEFINED;
  ge::Format format = ge::FORMAT_ND;
};
}  // namespace gert

namespace opsdk {
// What a context reads and writes: the node GE would infer, as opsdk's request gives it.
struct Node {
  std::string name, type;
  std::vector<gert::AnchorInstanceInfo> ir_inputs;  // per IR input: its given instances
  std::vector<gert::AnchorInstanceInfo> ir_outputs;  // one instance per output
  std::vector<gert::Shape> input_shapes;           // per given instance
  std::vector<gert::Tensor> input_tensors;
  std::vector<bool> input_unknown;                 // a value-depend input's data unknown
  std::vector<gert::CompileTimeTensorDesc> input_descs;
  std::vector<gert::Shape> output_shapes;
  std::vector<gert::CompileTimeTensorDesc> output_descs;
  gert::RuntimeAttrs attrs;
  size_t outputs_asked = 0;  // 1 + the highest output index the functions asked for
  void Asked(size_t i) { outputs_asked = std::max(outputs_asked, i + 1); }
};
}  // namespace opsdk

namespace gert {
// The node as GE describes it to a kernel (its IR inputs' instances, its tensors' descs).
class ComputeNodeInfo {
 public:
  explicit ComputeNodeInfo(opsdk::Node *node) : node_(node) {}
  const char *GetNodeName() const { return node_->name.c_str(); }
  const char *GetNodeType() const { return node_->type.c_str(); }
  size_t GetIrInputsNum() const { return node_->ir_inputs.size(); }
  size_t GetInputsNum() const { return node_->input_shapes.size(); }
  size_t GetOutputsNum() const { return node_->output_shapes.size(); }
  const AnchorInstanceInfo *GetInputInstanceInfo(size_t ir) const {
    return ir < node_->ir_inputs.size() ? &node_->ir_inputs[ir] : nullptr;
  }
  const CompileTimeTensorDesc *GetInputTdInfo(size_t i) const {
    return i < node_->input_descs.size() ? &node_->input_descs[i] : nullptr;
  }
  const CompileTimeTensorDesc *GetOutputTdInfo(size_t i) const {
    return i < node_->output_descs.size() ? &node_->output_descs[i] : nullptr;
  }
  CompileTimeTensorDesc *MutableOutputTdInfo(size_t i) const {
    return i < node_->output_descs.size() ? &node_->output_descs[i] : nullptr;
  }
  const RuntimeAttrs *GetAttrs() const { return &node_->attrs; }
 private:
  opsdk::Node *node_;
};

class ExtendedKernelContext {
 public:
  explicit ExtendedKernelContext(opsdk::Node *node) : node_(node), info_(node) {}
  const ComputeNodeInfo *GetComputeNodeInfo() const { return &info_; }
  const char *GetNodeName() const { return node_->name.c_str(); }
  const char *GetNodeType() const { return node_->type.c_str(); }
  const RuntimeAttrs *GetAttrs() const { return &node_->attrs; }
  size_t GetComputeNodeInputNum() const { return node_->input_shapes.size(); }
  size_t GetComputeNodeOutputNum() const { return node_->output_shapes.size(); }
  const AnchorInstanceInfo *GetIrInputInstanceInfo(size_t ir) const {
    return ir < node_->ir_inputs.size() ? &node_->ir_inputs[ir] : nullptr;
  }
  const AnchorInstanceInfo *GetIrOutputInstanceInfo(size_t ir) const {
    return ir < node_->ir_outputs.size() ? &node_->ir_outputs[ir] : nullptr;
  }
  const CompileTimeTensorDesc *GetInputDesc(size_t i) const { return At(node_->input_descs, i); }
  const CompileTimeTensorDesc *GetOptionalInputDesc(size_t ir) const { return At(node_->input_descs, Instance(ir, 0)); }
  const CompileTimeTensorDesc *GetRequiredInputDesc(size_t ir) const { return GetOptionalInputDesc(ir); }
  const CompileTimeTensorDesc *GetDynamicInputDesc(size_t ir, size_t k) const { return At(node_->input_descs, Instance(ir, k)); }
  const CompileTimeTensorDesc *GetOutputDesc(size_t i) const { return At(node_->output_descs, i); }
 protected:
  // The instance index of the k-th instance of IR input ``ir``; past the end when absent.
  size_t Instance(size_t ir, size_t k) const {
    const AnchorInstanceInfo *info = GetIrInputInstanceInfo(ir);
    return info == nullptr || k >= info->GetInstanceNum() ? SIZE_MAX : info->GetInstanceStart() + k;
  }
  template <typename T> static T *At(std::vector<T> &v, size_t i) { return i < v.size() ? &v[i] : nullptr; }
  template <typename T> static const T *At(const std::vector<T> &v, size_t i) { return i < v.size() ? &v[i] : nullptr; }
  opsdk::Node *node_;
  ComputeNodeInfo info_;
};

class InferShapeContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  const Shape *GetInputShape(size_t i) const { return At(node_->input_shapes, i); }
  const Shape *GetOptionalInputShape(size_t ir) const { return At(node_->input_shapes, Instance(ir, 0)); }
  const Shape *GetRequiredInputShape(size_t ir) const { return GetOptionalInputShape(ir); }
  const Shape *GetDynamicInputShape(size_t ir, size_t k) const { return At(node_->input_shapes, Instance(ir, k)); }
  const Tensor *GetInputTensor(size_t i) const { return Known(i); }
  const Tensor *GetOptionalInputTensor(size_t ir) const { return Known(Instance(ir, 0)); }
  const Tensor *GetRequiredInputTensor(size_t ir) const { return GetOptionalInputTensor(ir); }
  const Tensor *GetDynamicInputTensor(size_t ir, size_t k) const { return Known(Instance(ir, k)); }
  Shape *GetOutputShape(size_t i) { node_->Asked(i); return At(node_->output_shapes, i); }
 private:
  // GE gives every input's tensor (shape, dtype, format), its address null but for a
  // value-depend input's host data; a value-depend input whose data is unknown has none.
  const Tensor *Known(size_t i) const {
    const Tensor *t = At(node_->input_tensors, i);
    return t != nullptr && (t->GetAddr() != nullptr || !node_->input_unknown[i]) ? t : nullptr;
  }
};

class InferDataTypeContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  ge::DataType GetInputDataType(size_t i) const { return Dt(GetInputDesc(i)); }
  ge::DataType GetOptionalInputDataType(size_t ir) const { return Dt(GetOptionalInputDesc(ir)); }
  ge::DataType GetRequiredInputDataType(size_t ir) const { return Dt(GetRequiredInputDesc(ir)); }
  ge::DataType GetDynamicInputDataType(size_t ir, size_t k) const { return Dt(GetDynamicInputDesc(ir, k)); }
  ge::DataType GetOutputDataType(size_t i) const { return Dt(GetOutputDesc(i)); }
  graphStatus SetOutputDataType(size_t i, ge::DataType dt) {
    node_->Asked(i);
    if (i >= node_->output_descs.size()) return ge::GRAPH_FAILED;
    node_->output_descs[i].dt = dt;
    return ge::GRAPH_SUCCESS;
  }
 private:
  static ge::DataType Dt(const CompileTimeTensorDesc *d) { return d == nullptr ? ge::DT_UNDEFINED : d->GetDataType(); }
};

// Shape ranges (GE's dynamic-shape ranges): declared so range functions compile; opsdk
// never calls them.
template <typename T> class Range {
 public:
  const T *GetMin() const { return &min_; }
  const T *GetMax() const { return &max_; }
  T *GetMin() { return &min_; }
  T *GetMax() { return &max_; }
 private:
  T min_, max_;
};
class InferShapeRangeContext : public ExtendedKernelContext {
 public:
  using ExtendedKernelContext::ExtendedKernelContext;
  const Range<Shape> *GetInputShapeRange(size_t) const { return nullptr; }
  const Range<Shape> *GetOptionalInputShapeRange(size_t) const { return nullptr; }
  const Range<Shape> *GetDynamicInputShapeRange(size_t, size_t) const { return nullptr; }
  Range<Shape> *GetOutputShapeRange(size_t) { return nullptr; }
};

}  // namespace gert

// Tiling's contexts (gert::TilingContext...): opsdk_tiling.h, a stub here; the tiling
// build has its own, which runs them.
#include <opsdk_tiling.h>  // <>: the first on the search path (the tiling build has its own)

namespace gert {
using OpImplKernelRegistry = void;
using InferShapeKernelFunc = graphStatus (*)(InferShapeContext *);
using InferDataTypeKernelFunc = graphStatus (*)(InferDataTypeContext *);
using InferShapeRangeKernelFunc = graphStatus (*)(InferShapeRangeContext *);
using TilingKernelFunc = graphStatus (*)(TilingContext *);
using TilingParseKernelFunc = graphStatus (*)(TilingParseContext *);
}  // namespace gert

namespace opsdk {
struct Impl {
  gert::InferShapeKernelFunc infer_shape = nullptr;
  gert::InferDataTypeKernelFunc infer_dtype = nullptr;
  // IMPL_OP_OPTILING's: the TilingFunc, its TilingParse, a new compile info of the type
  // TilingParse<T> names, and the tiling data's capacity Tiling(f, size) states (0: unstated).
  gert::TilingKernelFunc tiling = nullptr;
  gert::TilingParseKernelFunc tiling_parse = nullptr;
  std::shared_ptr<void> (*new_compile_info)() = nullptr;
  size_t tiling_capacity = 0;
};
std::map<std::string, Impl> &Registry();
void Log(char level, const char *name, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
inline void Log(char level, const char *name, const char *file, int line) { Log(level, name, file, line, "%s", ""); }
inline const char *NameOf(const char *name) { return name; }
inline const char *NameOf(const std::string &name) { return name.c_str(); }
template <typename C> const char *NameOf(C *context) { return context == nullptr ? "?" : context->GetNodeName(); }
inline void Part(std::string &out, const char *text) { out += text == nullptr ? "" : text; }
inline void Part(std::string &out, const std::string &text) { out += text; }
template <typename T> void Part(std::string &out, const T &value) { out += std::to_string(value); }
// An error report of parts: "a, b, c".
template <typename... A> void Report(const char *name, const char *file, int line, const A &...parts) {
  std::string text;
  ((text.empty() ? void() : void(text += ", "), Part(text, parts)), ...);
  Log('E', name, file, line, "%s", text.c_str());
}

// What IMPL_OP_INFERSHAPE(Op) returns: records the functions; other settings are accepted.
class OpImplRegister {
 public:
  explicit OpImplRegister(const char *op) : impl_(&Registry()[op]) {}
  OpImplRegister &InferShape(gert::InferShapeKernelFunc f) { impl_->infer_shape = f; return *this; }
  OpImplRegister &InferDataType(gert::InferDataTypeKernelFunc f) { impl_->infer_dtype = f; return *this; }
  OpImplRegister &InferShapeRange(gert::InferShapeRangeKernelFunc) { return *this; }
  OpImplRegister &InputsDataDependency(std::initializer_list<int32_t>) { return *this; }
  template <typename... A> OpImplRegister &TilingInputsDataDependency(std::initializer_list<int32_t>, A...) {
    return *this;
  }
  OpImplRegister &OutputShapeDependOnCompute(std::initializer_list<int32_t>) { return *this; }
  OpImplRegister &PrivateAttr(const char *, ...) { return *this; }
  // The simplified-key function GE's binary selection calls: never called offline.
  template <typename F> OpImplRegister &GenSimplifiedKey(F) { return *this; }
  OpImplRegister &Tiling(gert::TilingKernelFunc f, size_t capacity = 0) {
    impl_->tiling = f;
    impl_->tiling_capacity = capacity;
    return *this;
  }
  template <typename T> OpImplRegister &TilingParse(gert::TilingParseKernelFunc f) {
    impl_->tiling_parse = f;
    impl_->new_compile_info = []() -> std::shared_ptr<void> { return std::make_shared<T>(); };
    return *this;
  }
  // Every output takes the first input's dtype (registered as an InferDataType).
  OpImplRegister &InferOutDataTypeSameWithFirstInput() {
    impl_->infer_dtype = [](gert::InferDataTypeContext *context) -> ge::graphStatus {
      for (size_t i = 0; i < context->GetComputeNodeOutputNum(); ++i) {
        context->SetOutputDataType(i, context->GetInputDataType(0));
      }
      return ge::GRAPH_SUCCESS;
    };
    return *this;
  }
 private:
  Impl *impl_;
};
}  // namespace opsdk

#define OPBASE_API __attribute__((visibility("default")))
#define OPSDK_CAT_(a, b) a##b
#define OPSDK_CAT(a, b) OPSDK_CAT_(a, b)
#define IMPL_OP_INFERSHAPE(op) \
  static ::opsdk::OpImplRegister OPSDK_CAT(opsdk_impl_, __COUNTER__) = ::opsdk::OpImplRegister(#op)
#define IMPL_OP(op) IMPL_OP_INFERSHAPE(op)
#define IMPL_OP_OPTILING(op) IMPL_OP_INFERSHAPE(op)

#define OPSDK_LOG(level, ctx, ...) ::opsdk::Log(level, ::opsdk::NameOf(ctx), __FILE__, __LINE__, ##__VA_ARGS__)
#define OP_LOGD(ctx, ...) OPSDK_LOG('D', ctx, ##__VA_ARGS__)
#define OP_LOGI(ctx, ...) OPSDK_LOG('I', ctx, ##__VA_ARGS__)
#define OP_LOGW(ctx, ...) OPSDK_LOG('W', ctx, ##__VA_ARGS__)
#define OP_LOGE(ctx, ...) OPSDK_LOG('E', ctx, ##__VA_ARGS__)
#define OP_LOGE_WITHOUT_REPORT(ctx, ...) OP_LOGE(ctx, ##__VA_ARGS__)
#define OP_CHECK_IF(cond, log, expr) \
  do {                               \
    if (cond) {                      \
      log;                           \
      expr;                          \
    }                                \
  } while (0)
#define OP_CHECK_NULL_WITH_CONTEXT(ctx, ptr)            \
  do {                                                  \
    if ((ptr) == nullptr) {                             \
      OP_LOGE(ctx, "%s is nullptr", #ptr);              \
      return ::ge::GRAPH_FAILED;                        \
    }                                                   \
  } while (0)
#define OPS_CHECK_NULL_WITH_CONTEXT(ctx, ptr) OP_CHECK_NULL_WITH_CONTEXT(ctx, ptr)
// The error-report macros name the op, then what is wrong (strings or numbers).
#define OPSDK_REPORT(ctx, ...) ::opsdk::Report(::opsdk::NameOf(ctx), __FILE__, __LINE__, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUES_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_LISTSIZE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIMS_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPES_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZES_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPES_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMAT(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMATS_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUM(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIG_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_STRIDE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUMS_WITH_REASON(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_DTYPE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR_SIZE(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT(ctx, ...) OPSDK_REPORT(ctx, __VA_ARGS__)
#define CUBE_INNER_ERR_REPORT(ctx, ...) OP_LOGE(ctx, __VA_ARGS__)
#define REPORT_INNER_ERR_MSG(code, ...) ::opsdk::Log('E', code, __FILE__, __LINE__, __VA_ARGS__)
#define REPORT_INNER_ERROR(code, ...) REPORT_INNER_ERR_MSG(code, __VA_ARGS__)
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#define VECTOR_INNER_ERR_REPORT_TILIING(ctx, ...) OP_LOGE(ctx, __VA_ARGS__)
#define OPS_LOG_D(ctx, ...) OP_LOGD(ctx, ##__VA_ARGS__)
#define OPS_LOG_I(ctx, ...) OP_LOGI(ctx, ##__VA_ARGS__)
#define OPS_LOG_W(ctx, ...) OP_LOGW(ctx, ##__VA_ARGS__)
#define OPS_LOG_E(ctx, ...) OP_LOGE(ctx, ##__VA_ARGS__)
#define OPS_ERR_IF(cond, log, expr) OP_CHECK_IF(cond, log, expr)
#define OP_TILING_CHECK(cond, log, expr) OP_CHECK_IF(cond, log, expr)
#define OPS_REPORT_VECTOR_INNER_ERR(ctx, ...) OP_LOGE(ctx, ##__VA_ARGS__)
#define OPS_REPORT_CUBE_INNER_ERR(ctx, ...) OP_LOGE(ctx, ##__VA_ARGS__)
#define OP_LOGW_IF(cond, ctx, ...) \
  do {                             \
    if (cond) OP_LOGW(ctx, ##__VA_ARGS__); \
  } while (0)
// CANN's dlog call (module, level, then what OP_LOG* take); the module is not evaluated.
enum { DLOG_DEBUG = 0, DLOG_INFO = 1, DLOG_WARN = 2, DLOG_ERROR = 3 };
// dlog's module id of operators, and whether a level is logged (CheckLogLevel: 1 if so):
// what a default install logs, warnings and errors (ops-transformer's tiling_base.h
// dumps its tiling data at debug level only).
enum { OP = 3 };
inline int32_t CheckLogLevel(int32_t, int32_t level) { return level >= DLOG_WARN ? 1 : 0; }
#define OpLogSub(module, level, ctx, ...) \
  ::opsdk::Log("DIWE"[(level) & 3], ::opsdk::NameOf(ctx), __FILE__, __LINE__, ##__VA_ARGS__)
#define D_OP_LOGE(ctx, ...) OP_LOGE(ctx, __VA_ARGS__)
#define D_OP_LOGD(ctx, ...) OP_LOGD(ctx, __VA_ARGS__)
#define D_OP_LOGI(ctx, ...) OP_LOGI(ctx, __VA_ARGS__)
#define D_OP_LOGW(ctx, ...) OP_LOGW(ctx, __VA_ARGS__)

#define OPS_CHECK_NULL_WITH_CONTEXT_BOOL(ctx, ptr) \
  do {                                             \
    if ((ptr) == nullptr) {                        \
      OP_LOGE(ctx, "%s is nullptr", #ptr);         \
      return false;                                \
    }                                              \
  } while (0)
#define OP_LOGE_IF(cond, ret, name, ...) \
  do {                                   \
    if (cond) {                          \
      OP_LOGE(name, ##__VA_ARGS__);      \
      return ret;                        \
    }                                    \
  } while (0)


// The chip CANN's platform API reports: the one the request names (opsdk's chip setting,
// cann/infer/chip.py), as its short SoC version ("Ascend910B", "Ascend950").
namespace opsdk {
const std::string &SocVersion();
}
namespace fe {
struct StrInfo {
  std::string short_soc_version = opsdk::SocVersion();
  std::string ai_core_version = opsdk::SocVersion();
};
struct PlatformInfo {
  StrInfo str_info;
};
struct OptionalInfo {
  std::string soc_version = opsdk::SocVersion();
};
class PlatformInfoManager {
 public:
  static PlatformInfoManager &Instance() {
    static PlatformInfoManager manager;
    return manager;
  }
  uint32_t InitializePlatformInfo() { return 0; }
  uint32_t GetPlatformInfoWithOutSocVersion(PlatformInfo &platform, OptionalInfo &optional) {
    platform = PlatformInfo();
    optional = OptionalInfo();
    return 0;
  }
  uint32_t GetPlatformInfo(const std::string &, PlatformInfo &platform, OptionalInfo &optional) {
    return GetPlatformInfoWithOutSocVersion(platform, optional);
  }
};
}  // namespace fe

namespace Ops {
namespace Base {
inline bool IsUnknownRank(const gert::Shape &s) { return s.GetDimNum() == 1 && s.GetDim(0) == -2; }
inline void SetUnknownRank(gert::Shape &s) { s.SetDimNum(0); s.AppendDim(-2); }
inline bool IsUnknownShape(const gert::Shape &s) {
  for (size_t i = 0; i < s.GetDimNum(); ++i) if (s.GetDim(i) < 0) return true;
  return false;
}
inline void SetUnknownShape(size_t rank, gert::Shape &s) { s.SetDimNum(0); for (size_t i = 0; i < rank; ++i) s.AppendDim(-1); }
inline std::string ToString(const gert::Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.GetDimNum(); ++i) out += (i ? ", " : "") + std::to_string(s.GetDim(i));
  return out + "]";
}
template <typename T> T CeilDiv(T a, T b) { return b == 0 ? a : (a + b - 1) / b; }
template <typename T> T FloorDiv(T a, T b) { return b == 0 ? a : a / b; }
inline ge::graphStatus InferShape4Elewise(gert::InferShapeContext *context) {
  const gert::Shape *in = context->GetInputShape(0);
  gert::Shape *out = context->GetOutputShape(0);
  if (in == nullptr || out == nullptr) return ge::GRAPH_FAILED;
  *out = *in;
  return ge::GRAPH_SUCCESS;
}
// Broadcast ``a`` and ``b`` into ``out`` (numpy rules; -1 unknown), false if they cannot.
inline bool BroadcastShape(const gert::Shape &a, const gert::Shape &b, gert::Shape &out) {
  if (IsUnknownRank(a) || IsUnknownRank(b)) { SetUnknownRank(out); return true; }
  size_t rank = std::max(a.GetDimNum(), b.GetDimNum());
  gert::Shape result;
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i + a.GetDimNum() >= rank ? a.GetDim(i + a.GetDimNum() - rank) : 1;
    int64_t y = i + b.GetDimNum() >= rank ? b.GetDim(i + b.GetDimNum() - rank) : 1;
    if (x == y || y == 1) { result.AppendDim(x); }
    else if (x == 1) { result.AppendDim(y); }
    else if (x == -1 || y == -1) { result.AppendDim(x == -1 ? y : x); }
    else { return false; }
  }
  out = result;
  return true;
}
inline bool BroadcastShape(const gert::Shape *a, const gert::Shape *b, gert::Shape *out) {
  return a != nullptr && b != nullptr && out != nullptr && BroadcastShape(*a, *b, *out);
}
inline bool BroadcastShape(const std::vector<const gert::Shape *> &shapes, gert::Shape *out) {
  if (out == nullptr) return false;
  gert::Shape result;
  for (const gert::Shape *s : shapes) {
    if (s == nullptr || !BroadcastShape(result, *s, result)) return false;
  }
  *out = result;
  return true;
}
// ``x`` reduced over ``axes`` (negative counts from the end) into ``out``: the reduced
// dims kept as 1 (WithKeepDims) or dropped (WithoutKeepDims).
template <typename T>
ge::graphStatus ReduceDims(const gert::Shape *x, const T *axes, int32_t count, gert::Shape *out, bool keep) {
  if (x == nullptr || out == nullptr || (count > 0 && axes == nullptr)) return ge::GRAPH_FAILED;
  int64_t rank = static_cast<int64_t>(x->GetDimNum());
  std::vector<bool> reduced(x->GetDimNum(), false);
  for (int32_t i = 0; i < count; ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return ge::GRAPH_FAILED;
    reduced[axis] = true;
  }
  gert::Shape result;
  for (size_t i = 0; i < x->GetDimNum(); ++i) {
    if (!reduced[i]) result.AppendDim(x->GetDim(i));
    else if (keep) result.AppendDim(1);
  }
  *out = result;
  return ge::GRAPH_SUCCESS;
}
template <typename T>
ge::graphStatus ReduceDimsWithKeepDims(const gert::Shape *x, const T *axes, int32_t count, gert::Shape *out) {
  return ReduceDims(x, axes, count, out, true);
}
template <typename T>
ge::graphStatus ReduceDimsWithoutKeepDims(const gert::Shape *x, const T *axes, int32_t count, gert::Shape *out) {
  return ReduceDims(x, axes, count, out, false);
}
// IEEE half precision, as a value type: its bits, from and to float (round to nearest even).
struct fp16_t {
  uint16_t val = 0;
  fp16_t() = default;
  explicit fp16_t(float f) : val(Encode(f)) {}
  explicit operator float() const {
    int exp = val >> 10 & 0x1F, mant = val & 0x3FF;
    float magnitude = exp == 0 ? std::ldexp(float(mant), -24)
                      : exp == 31 ? (mant ? NAN : INFINITY)
                                  : std::ldexp(float(mant | 0x400), exp - 25);
    return val & 0x8000 ? -magnitude : magnitude;
  }
  static uint16_t Encode(float f) {
    uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    float a = std::fabs(f);
    if (std::isnan(f)) return sign | 0x7E00;
    if (a >= 65520.0f) return sign | 0x7C00;
    if (a < std::ldexp(1.0f, -14)) return sign | uint16_t(std::nearbyint(std::ldexp(a, 24)));  // subnormal
    int e;
    uint32_t mant = uint32_t(std::nearbyint(std::ldexp(std::frexp(a, &e), 11)));  // 1024..2048
    if (mant == 2048) mant = 1024, ++e;
    return sign | uint16_t((e + 14) << 10) | uint16_t(mant - 1024);
  }
};
// Whether two floats are equal within float's epsilon.
template <typename T, typename U> bool IsFloatEqual(T a, U b) {
  return std::fabs(double(a) - double(b)) <= std::numeric_limits<float>::epsilon();
}
// What the log macros name an op by: a context's node name, or the name itself.
template <typename C> const char *GetOpInfo(const C &op) { return ::opsdk::NameOf(op); }
inline std::string ToString(ge::DataType dt) { return opsdk_dtype_name(dt); }
inline std::string ToString(ge::Format format) { return std::to_string(static_cast<int>(format)); }
inline std::string ToString(const std::vector<const gert::Shape *> &shapes) {
  std::string out;
  for (const gert::Shape *s : shapes) out += s == nullptr ? "null" : ToString(*s);
  return out;
}
// A value-depend input's first value (int32 or int64 data), false without data.
template <typename C, typename V> bool GetConstInt(C *context, size_t index, V &value) {
  const gert::Tensor *tensor = context->GetInputTensor(index);
  if (tensor == nullptr || tensor->GetShapeSize() < 1) return false;
  bool wide = tensor->GetDataType() == ge::DT_INT64;
  value = static_cast<V>(wide ? tensor->GetData<int64_t>()[0] : tensor->GetData<int32_t>()[0]);
  return true;
}
// A value-depend input's values as a shape, false without data.
template <typename C> bool GetConstIntToShape(C *context, int64_t index, gert::Shape &shape) {
  const gert::Tensor *tensor = context->GetInputTensor(index);
  if (tensor == nullptr || tensor->GetShapeSize() < 0) return false;
  bool wide = tensor->GetDataType() == ge::DT_INT64;
  shape.SetDimNum(0);
  for (int64_t i = 0; i < tensor->GetShapeSize(); ++i) {
    shape.AppendDim(wide ? tensor->GetData<int64_t>()[i] : tensor->GetData<int32_t>()[i]);
  }
  return true;
}
// The first ``inputs`` inputs broadcast into output 0.
inline ge::graphStatus InferShape4Broadcast(gert::InferShapeContext *context, size_t inputs) {
  gert::Shape result;
  for (size_t i = 0; i < std::min(inputs, context->GetComputeNodeInputNum()); ++i) {
    const gert::Shape *in = context->GetInputShape(i);
    if (in == nullptr || !BroadcastShape(result, *in, result)) {
      OP_LOGE(context, "the inputs do not broadcast");
      return ge::GRAPH_FAILED;
    }
  }
  gert::Shape *out = context->GetOutputShape(0);
  if (out == nullptr) return ge::GRAPH_FAILED;
  *out = result;
  return ge::GRAPH_SUCCESS;
}
inline ge::graphStatus InferShape4Broadcast(gert::InferShapeContext *context) {
  return InferShape4Broadcast(context, SIZE_MAX);
}
}  // namespace Base
}  // namespace Ops
