// opsdk's stand-in of torch_npu's output preparation helpers (declared only).
#pragma once
#include <ATen/ATen.h>

namespace at_npu {
namespace native {
class OpPreparation {
public:
    static at::Tensor apply_tensor_without_format(c10::IntArrayRef sizes, const c10::TensorOptions &options);
    static at::Tensor apply_tensor_without_format(const at::Tensor &src);
};
}  // namespace native
}  // namespace at_npu
