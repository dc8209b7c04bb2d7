// A Meta file whose loading crashes the process (its static initializer writes through
// a null pointer): the audit says so and leaves its op unchecked.
#include <torch/library.h>

namespace planted {
at::Tensor crashy_meta(const at::Tensor &x)
{
    return x;
}
static int crashed = (*static_cast<volatile int *>(nullptr) = 1);
}  // namespace planted

TORCH_LIBRARY_IMPL(planted, Meta, m)
{
    m.impl("crashy", &planted::crashy_meta);
}
