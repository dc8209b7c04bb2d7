// Meta functions: shapes and dtypes only, registered under the Meta key.
#include <ATen/ATen.h>
#include <torch/library.h>
#include <torch_npu/csrc/core/npu/NPUStream.h>
#include <torch_npu/csrc/framework/OpCommand.h>
#include "utils.h"

namespace planted {
namespace meta {

at::Tensor same_meta(const at::Tensor &x)
{
    return at::empty_like(x);
}

at::Tensor alias_out_meta(const at::Tensor &x, at::Tensor &out)
{
    return out;
}

void fresh_out_meta(const at::Tensor &x, at::Tensor &out)
{
}

void store_meta(const at::Tensor &x, const at::Tensor &cache)
{
}

at::Tensor scale_meta(at::Tensor &x, double s)
{
    return x;
}

void shift_meta(at::Tensor &x, double s)
{
}

}  // namespace meta
}  // namespace planted

PLANTED_LIBRARY_IMPL(CONCAT(pla, nted), Meta, ops)
{
    ops.impl("tidy", &planted::meta::same_meta);
    ops.impl("stray_pre", &planted::meta::same_meta);
    ops.impl("alias_out", &planted::meta::alias_out_meta);
    ops.impl("fresh_out", &planted::meta::fresh_out_meta);
    ops.impl("store", &planted::meta::store_meta);
    ops.impl("store_ok", &planted::meta::store_meta);
    ops.impl("touch", &planted::meta::store_meta);
    ops.impl("scale_", &planted::meta::scale_meta);
    ops.impl("shift_", &planted::meta::shift_meta);
}
