// What an aclnn API takes that op-plugin's EXEC_NPU_CMD does not make by itself, and the
// compile-time proof that a call passes what the API declares. For the NPU-host branch of a
// --style cpp op library (OPSDK_WITH_CANN), after op-plugin's op_api_common.h.
//
// EXEC_NPU_CMD converts each argument with ConvertType (with CopyTypeV2 then ConvertTypeV2 when
// the task queue runs the call later), hashes it for its executor cache with add_param_to_buf
// (add_param_to_buf_v2) and releases what it made once the kernel has run. It converts tensors,
// optional tensors, tensor lists, int and bool lists, scalars, scalar lists and dtypes, and
// passes anything else as it is. The types below add the hooks for the rest (a float list, a
// tensor's values read on the host, Scalar and Scalar[] inputs), found by
// argument-dependent lookup: they are op-plugin's own customization points.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "op_plugin/utils/op_api_common.h"

// An aclnn function's status, as CANN's aclnn/acl_meta.h declares it (not in the torch-npu wheel).
typedef int32_t aclnnStatus;

// op-plugin releases what ConvertType makes with Release(); it has none for a float array
// (should a later op-plugin add one, this becomes a redefinition: drop it then).
inline void Release(aclFloatArray* array) {
  static const auto aclDestroyFloatArray = GET_OP_API_FUNC(aclDestroyFloatArray);
  if (array != nullptr && aclDestroyFloatArray != nullptr) {
    aclDestroyFloatArray(array);
  }
}

namespace opsdk::aclnn {

namespace detail {

template <class T>
struct Acl;  // the aclnn array of T elements, and the ACL function that makes one

template <>
struct Acl<int64_t> {
  using type = aclIntArray;
  static constexpr const char* create = "aclCreateIntArray";
};

template <>
struct Acl<float> {
  using type = aclFloatArray;
  static constexpr const char* create = "aclCreateFloatArray";
};

template <>
struct Acl<bool> {
  using type = aclBoolArray;
  static constexpr const char* create = "aclCreateBoolArray";
};

template <class T>
typename Acl<T>::type* create(const T* values, uint64_t size) {
  using Create = typename Acl<T>::type* (*)(const T*, uint64_t);
  static const auto make = reinterpret_cast<Create>(GetOpApiFuncAddr(Acl<T>::create));
  return make == nullptr ? nullptr : make(values, size);
}

}  // namespace detail

// A host array aclnn takes (aclIntArray, aclFloatArray, aclBoolArray), or none (nullptr, for an
// absent optional input).
template <class T>
class Array {
 public:
  Array() = default;
  template <class Values>
  explicit Array(const Values& values) : values_(values.begin(), values.end()), present_(true) {}

  typename detail::Acl<T>::type* make() const {
    return present_ ? detail::create<T>(values_.data(), values_.size()) : nullptr;
  }
  void hash() const {
    MEMCPY_TO_BUF(&present_, sizeof(present_));
    MEMCPY_TO_BUF(values_.data(), static_cast<int64_t>(values_.size() * sizeof(T)));
  }

 private:
  c10::SmallVector<T, 8> values_;
  bool present_ = false;
};

using FloatArray = Array<float>;
using BoolArray = Array<bool>;

// A tensor's values, read on the host: what aclnn takes for a ValueDepend input.
template <class T>
Array<T> host_values(const at::Tensor& tensor) {
  const at::Tensor host = tensor.to(at::kCPU, c10::CppTypeToScalarType<T>::value).contiguous();
  return Array<T>(c10::ArrayRef<T>(host.data_ptr<T>(), host.numel()));
}

template <class T>
Array<T> host_values(const std::optional<at::Tensor>& tensor) {
  return tensor.has_value() ? host_values<T>(*tensor) : Array<T>();
}

// A host argument's ints (a ValueDepend input the schema takes as SymInt or SymInt[]): the
// aclIntArray aclnn takes for it, or none for an absent optional one.
inline Array<int64_t> host_ints(c10::SymIntArrayRef values) {
  return Array<int64_t>(c10::asIntArrayRefSlow(values, __FILE__, __LINE__));
}

inline Array<int64_t> host_ints(const c10::SymInt& value) {
  return Array<int64_t>(std::array<int64_t, 1>{value.guard_int(__FILE__, __LINE__)});
}

inline Array<int64_t> host_ints(const at::OptionalSymIntArrayRef& values) {
  return values.has_value() ? host_ints(*values) : Array<int64_t>();
}

inline Array<int64_t> host_ints(const std::optional<c10::SymInt>& value) {
  return value.has_value() ? host_ints(*value) : Array<int64_t>();
}

template <class T>
typename detail::Acl<T>::type* ConvertType(const Array<T>& array) {
  return array.make();
}

template <class T>
typename detail::Acl<T>::type* ConvertTypeV2(const Array<T>& array) {
  return array.make();
}

template <class T>
void add_param_to_buf(const Array<T>& array) {
  array.hash();
}

template <class T>
void add_param_to_buf_v2(const Array<T>& array) {
  array.hash();
}

// A Scalar input's value (the schema's Scalar or Scalar?), as aclnn takes it.
inline at::Scalar scalar(const at::Scalar& value) { return value; }

inline std::optional<at::Scalar> scalar(const std::optional<at::Scalar>& value) { return value; }

// A Scalar[] input's values, or none (nullptr): what aclnn takes for a ScalarList input.
class ScalarList {
 public:
  explicit ScalarList(at::ArrayRef<at::Scalar> values) : values_(values.vec()) {}

  aclScalarList* make() const {
    return values_.has_value() ? ::ConvertType(at::ArrayRef<at::Scalar>(*values_)) : nullptr;
  }
  aclScalarList* make_v2() const { return values_.has_value() ? ::ConvertTypeV2(*values_) : nullptr; }
  void hash() const {
    ::add_param_to_buf(values_.has_value());
    if (values_.has_value()) {
      ::add_param_to_buf(at::ArrayRef<at::Scalar>(*values_));
    }
  }
  void hash_v2() const {
    ::add_param_to_buf_v2(values_.has_value());
    if (values_.has_value()) {
      ::add_param_to_buf_v2(*values_);
    }
  }

 private:
  std::optional<std::vector<at::Scalar>> values_;
};

inline aclScalarList* ConvertType(const ScalarList& list) { return list.make(); }
inline aclScalarList* ConvertTypeV2(const ScalarList& list) { return list.make_v2(); }
inline void add_param_to_buf(const ScalarList& list) { list.hash(); }
inline void add_param_to_buf_v2(const ScalarList& list) { list.hash_v2(); }

// A dtype attr (CANN's OpDef writes it .Int(ge::DT_...)): aclnn takes GE's number as an
// int64_t, which aclDataType shares.
inline int64_t ge_dtype(at::ScalarType dtype) { return static_cast<int64_t>(::ConvertType(dtype)); }

}  // namespace opsdk::aclnn

// Outside opsdk::aclnn, as op-plugin's own call: its overloads of ConvertType and ConvertTypeV2
// in the global namespace, and the ones above by argument-dependent lookup.
namespace opsdk::exec_npu_cmd {

template <class F>
struct Params;

template <class R, class... P>
struct Params<R(P...)> {
  using type = std::tuple<P...>;
};

// What EXEC_NPU_CMD passes for an argument of type A: ConvertType's result, or with the task
// queue, ConvertTypeV2's of CopyTypeV2's.
template <class A>
using V1 = std::decay_t<decltype(ConvertType(std::declval<A&>()))>;
template <class A>
using V2 = std::decay_t<decltype(ConvertTypeV2(std::declval<const decltype(CopyTypeV2(std::declval<A&>()))&>()))>;

// The same type, or a pointer to the mutable object where the parameter points to a const one.
template <class Passed, class Param>
inline constexpr bool same = std::is_same_v<Passed, Param> ||
                             (std::is_pointer_v<Passed> && std::is_pointer_v<Param> &&
                              std::is_same_v<const std::remove_pointer_t<Passed>, std::remove_pointer_t<Param>>);

// The number of arguments an aclnn GetWorkspaceSize function takes before its workspaceSize and
// executor.
template <class Api>
inline constexpr std::size_t arity = std::tuple_size_v<typename Params<Api>::type> - 2;

// Whether EXEC_NPU_CMD, given the arguments Args, passes parameter I of the aclnn
// GetWorkspaceSize function Api what it declares: what op-plugin makes of the I-th argument is
// the parameter's type (an aclDataType where it takes an int64_t is not).
template <class Api, std::size_t I, class... Args>
constexpr bool takes() {
  if constexpr (I < sizeof...(Args) && I < arity<Api>) {
    using Param = std::tuple_element_t<I, typename Params<Api>::type>;
    using Arg = std::tuple_element_t<I, std::tuple<Args...>>;
    return same<V1<Arg>, Param> && same<V2<Arg>, Param>;
  } else {
    return false;
  }
}

}  // namespace opsdk::exec_npu_cmd

// EXEC_NPU_CMD(api, ...) once the compiler has proved the call: `api`Takes(...), which the op
// library defines next to the API's declaration, asserts each argument's conversion against the
// parameter at its position, by name.
#define OPSDK_EXEC_NPU_CMD(api, ...) \
  do {                               \
    api##Takes(__VA_ARGS__);         \
    EXEC_NPU_CMD(api, __VA_ARGS__);  \
  } while (false)
