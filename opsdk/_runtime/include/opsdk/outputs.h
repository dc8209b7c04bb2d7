// The outputs of an op, allocated as its fake function says.
//
// A kernel that calls an aclnn API allocates the op's outputs first. Their sizes and dtypes
// are what the op's fake function computes (fake.py, registered with register_fake, which is
// also the op's Meta kernel): empty_outputs runs the op on meta twins of the arguments, then
// allocates each result on the device. One rule for shapes, the fake's, serves
// torch.compile and the kernel alike.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include <optional>
#include <tuple>
#include <vector>

namespace opsdk {
namespace detail {

inline at::Tensor on_meta(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

inline std::optional<at::Tensor> on_meta(const std::optional<at::Tensor>& t) {
  return t.has_value() ? std::optional<at::Tensor>(on_meta(*t)) : std::nullopt;
}

inline std::vector<at::Tensor> on_meta(at::TensorList ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(on_meta(t));
  return out;
}

template <class T>
const T& on_meta(const T& value) {  // not a tensor: passed as it is
  return value;
}

inline at::Tensor on_device(const at::Tensor& meta, c10::Device device) {
  return at::empty(meta.sizes(), meta.options().device(device));
}

inline std::vector<at::Tensor> on_device(const std::vector<at::Tensor>& metas, c10::Device device) {
  std::vector<at::Tensor> out;
  out.reserve(metas.size());
  for (const auto& m : metas) out.push_back(on_device(m, device));
  return out;
}

template <class... T>
std::tuple<T...> on_device(const std::tuple<T...>& metas, c10::Device device) {
  return std::apply([&](const auto&... m) { return std::tuple<T...>(on_device(m, device)...); }, metas);
}

}  // namespace detail

// The outputs, each contiguous, as an aclnn kernel returns them (opsdk.meta.contiguous in
// C++): a reference standing in for the kernel offline keeps an input's layout otherwise.
inline at::Tensor contiguous(const at::Tensor& t) { return t.contiguous(); }

inline std::vector<at::Tensor> contiguous(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(t.contiguous());
  return out;
}

template <class... T>
std::tuple<T...> contiguous(const std::tuple<T...>& ts) {
  return std::apply([](const auto&... t) { return std::tuple<T...>(contiguous(t)...); }, ts);
}

// The op's returns as its fake function computes them, as empty tensors on `device`.
// `op`: the op's typed handle, e.g.
//   c10::Dispatcher::singleton().findSchemaOrThrow("ns::name", "").typed<decltype(kernel)>()
template <class Return, class... Params, class... Args>
Return empty_outputs(const c10::TypedOperatorHandle<Return(Params...)>& op, c10::Device device,
                     const Args&... args) {
  return detail::on_device(op.call(detail::on_meta(args)...), device);
}

}  // namespace opsdk
