// opsdk's own stand-in for GE's operator API as old-style op prototypes use it: a REG_OP in a
// header (graph/operator_reg.h) and an infer function in op_proto/*.cc, written with
// IMPLEMT_COMMON_INFERFUNC / IMPLEMT_INFERFUNC and registered with COMMON_INFER_FUNC_REG /
// INFER_FUNC_REG, as CANN's samples write them. Written from the API's documented facts; no
// CANN header is copied. REG_OP records the op's input, output and attr names in IR order;
// a registered function becomes the op's InferShape and InferDataType: it runs on a
// ge::Operator made from the context, and the output descs it updates are written back.
#pragma once

#include "opsdk_gert.h"

namespace opsdk {
// An op's prototype as REG_OP declares it: names in IR order ('d': a dynamic input).
struct OpProto {
  std::vector<std::string> inputs, outputs, attrs;
  std::vector<char> input_kinds;
};
inline std::map<std::string, OpProto> &Protos() {
  static std::map<std::string, OpProto> protos;
  return protos;
}

// What REG_OP(Op).INPUT(x, ...)... builds: the prototype's names, the types dropped.
class RegOp {
 public:
  explicit RegOp(const char *type) : proto_(&Protos()[type]) {}
  RegOp &Input(const char *name, char kind = 'r') {
    proto_->inputs.push_back(name);
    proto_->input_kinds.push_back(kind);
    return *this;
  }
  RegOp &Output(const char *name) { proto_->outputs.push_back(name); return *this; }
  RegOp &Attr(const char *name) { proto_->attrs.push_back(name); return *this; }
  RegOp &Other() { return *this; }
 private:
  OpProto *proto_;
};
}  // namespace opsdk

#define REG_OP(op) static ::opsdk::RegOp OPSDK_CAT(opsdk_reg_op_, __COUNTER__) = ::opsdk::RegOp(#op)
#define INPUT(x, ...) Input(#x)
#define OPTIONAL_INPUT(x, ...) Input(#x, 'o')
#define DYNAMIC_INPUT(x, ...) Input(#x, 'd')
#define OUTPUT(x, ...) Output(#x)
#define DYNAMIC_OUTPUT(x, ...) Output(#x)
#define ATTR(x, ...) Attr(#x)
#define REQUIRED_ATTR(x, ...) Attr(#x)
#define DATATYPE(x, ...) Other()
#define OP_END_FACTORY_REG(op) Other();

namespace ge {
// A tensor's dims (-1 unknown, {-2} unknown rank).
class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<int64_t> &dims) : dims_(dims) {}
  std::vector<int64_t> GetDims() const { return dims_; }
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
  graphStatus SetDim(size_t i, int64_t value) {
    if (i >= dims_.size()) return GRAPH_FAILED;
    dims_[i] = value;
    return GRAPH_SUCCESS;
  }
  int64_t GetShapeSize() const {
    int64_t size = 1;
    for (int64_t d : dims_) {
      if (d < 0) return -1;
      size *= d;
    }
    return size;
  }
 private:
  std::vector<int64_t> dims_;
};

class TensorDesc {
 public:
  TensorDesc() = default;
  explicit TensorDesc(const Shape &shape, Format format = FORMAT_ND, DataType dt = DT_FLOAT)
      : shape_(shape), format_(format), dt_(dt) {}
  Shape GetShape() const { return shape_; }
  void SetShape(const Shape &shape) { shape_ = shape; }
  Shape GetOriginShape() const { return shape_; }
  void SetOriginShape(const Shape &shape) { shape_ = shape; }
  DataType GetDataType() const { return dt_; }
  void SetDataType(DataType dt) { dt_ = dt; }
  Format GetFormat() const { return format_; }
  void SetFormat(Format format) { format_ = format; }
  Format GetOriginFormat() const { return format_; }
  void SetOriginFormat(Format format) { format_ = format; }
  int64_t GetRealDimCnt() const { return static_cast<int64_t>(shape_.GetDimNum()); }
 private:
  Shape shape_;
  Format format_ = FORMAT_ND;
  DataType dt_ = DT_UNDEFINED;
};

// A node as an old-style infer function sees it: its tensors' descs and attrs by IR name.
class Operator {
 public:
  Operator(const gert::ExtendedKernelContext *context, const gert::InferShapeContext *shapes)
      : context_(context), proto_(&opsdk::Protos()[context->GetNodeType()]) {
    for (size_t ir = 0; ir < proto_->inputs.size(); ++ir) {
      const gert::CompileTimeTensorDesc *desc = context->GetOptionalInputDesc(ir);
      if (desc == nullptr) continue;
      const bool dynamic = proto_->input_kinds[ir] == 'd';
      const gert::Shape *shape = shapes == nullptr ? nullptr
                                 : dynamic          ? shapes->GetDynamicInputShape(ir, 0)
                                                    : shapes->GetOptionalInputShape(ir);
      std::vector<int64_t> dims;
      for (size_t i = 0; shape != nullptr && i < shape->GetDimNum(); ++i) dims.push_back(shape->GetDim(i));
      inputs_[proto_->inputs[ir]] = TensorDesc(Shape(dims), desc->GetOriginFormat(), desc->GetDataType());
    }
  }
  std::string GetName() const { return context_->GetNodeName(); }
  graphStatus GetName(AscendString &name) const { name = AscendString(context_->GetNodeName()); return GRAPH_SUCCESS; }
  std::string GetOpType() const { return context_->GetNodeType(); }
  TensorDesc GetInputDesc(const std::string &name) const { return Find(inputs_, name); }
  TensorDesc GetInputDesc(uint32_t i) const { return i < proto_->inputs.size() ? Find(inputs_, proto_->inputs[i]) : TensorDesc(); }
  TensorDesc GetInputDescByName(const char *name) const { return Find(inputs_, name); }
  TensorDesc GetOutputDesc(const std::string &name) const { return Find(outputs_, name); }
  TensorDesc GetOutputDesc(uint32_t i) const { return i < proto_->outputs.size() ? Find(outputs_, proto_->outputs[i]) : TensorDesc(); }
  TensorDesc GetOutputDescByName(const char *name) const { return Find(outputs_, name); }
  graphStatus UpdateOutputDesc(const std::string &name, const TensorDesc &desc) {
    if (std::find(proto_->outputs.begin(), proto_->outputs.end(), name) == proto_->outputs.end()) return GRAPH_FAILED;
    outputs_[name] = desc;
    return GRAPH_SUCCESS;
  }
  size_t GetInputsSize() const { return inputs_.size(); }
  size_t GetOutputsSize() const { return proto_->outputs.size(); }
  graphStatus GetAttr(const std::string &name, int64_t &value) const { return Scalar(name, value); }
  graphStatus GetAttr(const std::string &name, int32_t &value) const {
    int64_t wide = 0;
    graphStatus status = Scalar(name, wide);
    value = static_cast<int32_t>(wide);
    return status;
  }
  graphStatus GetAttr(const std::string &name, float &value) const { return Scalar(name, value); }
  graphStatus GetAttr(const std::string &name, bool &value) const { return Scalar(name, value); }
  graphStatus GetAttr(const std::string &name, std::string &value) const {
    const char *text = static_cast<const char *>(Attr(name));
    if (text == nullptr) return GRAPH_FAILED;
    value = text;
    return GRAPH_SUCCESS;
  }
  graphStatus GetAttr(const std::string &name, std::vector<int64_t> &value) const {
    auto list = static_cast<const gert::TypedContinuousVector<int64_t> *>(Attr(name));
    if (list == nullptr) return GRAPH_FAILED;
    value.assign(list->GetData(), list->GetData() + list->GetSize());
    return GRAPH_SUCCESS;
  }
  // opsdk's: the outputs the function updated, by IR index.
  const TensorDesc *Updated(size_t i) const {
    auto found = outputs_.find(proto_->outputs[i]);
    return found == outputs_.end() ? nullptr : &found->second;
  }
 private:
  static TensorDesc Find(const std::map<std::string, TensorDesc> &descs, const std::string &name) {
    auto found = descs.find(name);
    return found == descs.end() ? TensorDesc() : found->second;
  }
  const void *Attr(const std::string &name) const {
    auto at = std::find(proto_->attrs.begin(), proto_->attrs.end(), name);
    return at == proto_->attrs.end() ? nullptr : context_->GetAttrs()->GetPointerByIndex(at - proto_->attrs.begin());
  }
  template <typename T> graphStatus Scalar(const std::string &name, T &value) const {
    const T *found = static_cast<const T *>(Attr(name));
    if (found == nullptr) return GRAPH_FAILED;
    value = *found;
    return GRAPH_SUCCESS;
  }
  const gert::ExtendedKernelContext *context_;
  const opsdk::OpProto *proto_;
  std::map<std::string, TensorDesc> inputs_, outputs_;
};
}  // namespace ge

namespace opsdk {
using OperatorInferFunc = ge::graphStatus (*)(ge::Operator &);
inline std::map<std::string, OperatorInferFunc> &OperatorInfers() {
  static std::map<std::string, OperatorInferFunc> infers;
  return infers;
}

// The registered function of the context's op, run on an Operator made from it.
inline ge::graphStatus RunOperatorInfer(ge::Operator &op, const char *type) {
  auto found = OperatorInfers().find(type);
  return found == OperatorInfers().end() ? ge::GRAPH_FAILED : found->second(op);
}

inline ge::graphStatus OperatorInferShape(gert::InferShapeContext *context) {
  ge::Operator op(context, context);
  ge::graphStatus status = RunOperatorInfer(op, context->GetNodeType());
  for (size_t i = 0; status == ge::GRAPH_SUCCESS && i < op.GetOutputsSize(); ++i) {
    const ge::TensorDesc *desc = op.Updated(i);
    gert::Shape *shape = desc == nullptr ? nullptr : context->GetOutputShape(i);
    if (shape == nullptr) continue;
    shape->SetDimNum(0);
    for (int64_t d : desc->GetShape().GetDims()) shape->AppendDim(d);
  }
  return status;
}

inline ge::graphStatus OperatorInferDataType(gert::InferDataTypeContext *context) {
  ge::Operator op(context, nullptr);
  ge::graphStatus status = RunOperatorInfer(op, context->GetNodeType());
  for (size_t i = 0; status == ge::GRAPH_SUCCESS && i < op.GetOutputsSize(); ++i) {
    const ge::TensorDesc *desc = op.Updated(i);
    if (desc != nullptr) context->SetOutputDataType(i, desc->GetDataType());
  }
  return status;
}

// What COMMON_INFER_FUNC_REG(Op, f) registers: f as Op's InferShape and InferDataType.
inline OpImplRegister RegisterOperatorInfer(const char *type, OperatorInferFunc infer) {
  OperatorInfers()[type] = infer;
  return OpImplRegister(type).InferShape(OperatorInferShape).InferDataType(OperatorInferDataType);
}
}  // namespace opsdk

#define IMPLEMT_COMMON_INFERFUNC(func) static ::ge::graphStatus func(::ge::Operator &op)
#define IMPLEMT_INFERFUNC(op_type, func) static ::ge::graphStatus func(::ge::Operator &op)
#define IMPLEMT_VERIFIER(op_type, func) static ::ge::graphStatus func(::ge::Operator &op)
#define COMMON_INFER_FUNC_REG(op_type, func)                                      \
  static ::opsdk::OpImplRegister OPSDK_CAT(opsdk_operator_infer_, __COUNTER__) = \
      ::opsdk::RegisterOperatorInfer(#op_type, func)
#define INFER_FUNC_REG(op_type, func) COMMON_INFER_FUNC_REG(op_type, func)
#define CUST_COMMON_INFER_FUNC_REG(op_type, func) COMMON_INFER_FUNC_REG(op_type, func)
#define CUST_INFER_FUNC_REG(op_type, func) COMMON_INFER_FUNC_REG(op_type, func)
#define VERIFY_FUNC_REG(op_type, func) static_assert(true, "")
#define CUST_VERIFY_FUNC_REG(op_type, func) static_assert(true, "")
