// Schemas and kernels. EXEC_NPU_CMD and the aclnn ops come from CANN and torch_npu on a
// real build; this file is only read.
#include <torch/library.h>
#include "utils.h"

namespace planted {

at::Tensor tidy(const at::Tensor &x) { return x; }
at::Tensor stray(const at::Tensor &x) { return x; }
at::Tensor bare(const at::Tensor &x) { return x; }
at::Tensor alias_out(const at::Tensor &x, at::Tensor &out) { return out; }
void fresh_out(const at::Tensor &x, at::Tensor &out) {}

void store(const at::Tensor &x, const at::Tensor &cache)
{
    EXEC_NPU_CMD(aclnnStore, x, cache);
}

void store_ok(const at::Tensor &x, at::Tensor &cache)
{
    EXEC_NPU_CMD(aclnnStoreOk, x, cache);
}

void touch(const at::Tensor &x, const at::Tensor &cache) { launch_touch(x.data_ptr(), cache.data_ptr()); }

at::Tensor scale_(at::Tensor &x, double s) { return x; }
void shift_(at::Tensor &x, double s) {}
at::Tensor late(const at::Tensor &x) { return x; }
at::Tensor crashy(const at::Tensor &x) { return x; }

}  // namespace planted

PLANTED_LIBRARY(CONCAT(pla, nted), ops)
{
    ops.def("tidy(Tensor x) -> Tensor");
    ops.impl("tidy", torch::kPrivateUse1, &planted::tidy);
    ops.def("stray(Tensor x) -> Tensor");
    ops.impl("stray", torch::kPrivateUse1, &planted::stray);
    ops.def("bare(Tensor x) -> Tensor");
    ops.impl("bare", torch::kPrivateUse1, &planted::bare);
    ops.def(
        "alias_out(Tensor x, "
        "          Tensor! out) -> Tensor");
    ops.impl("alias_out", torch::kPrivateUse1, &planted::alias_out);
    ops.def("fresh_out(Tensor x, Tensor(a!) out) -> ()");
    ops.impl("fresh_out", torch::kPrivateUse1, &planted::fresh_out);
    ops.def("store(Tensor x, Tensor cache) -> ()");
    ops.impl("store", torch::kPrivateUse1, &planted::store);
    ops.def("store_ok(Tensor x, Tensor(a!) cache) -> ()");
    ops.impl("store_ok", torch::kPrivateUse1, &planted::store_ok);
    ops.def("store_plain(Tensor x, Tensor(a!) cache) -> ()");  // no Meta: torch fakes it
    ops.def("touch(Tensor x, Tensor cache) -> ()");
    ops.impl("touch", torch::kPrivateUse1, &planted::touch);
    ops.impl("store_plain", torch::kPrivateUse1, &planted::store_ok);
    ops.def("scale_(Tensor(a!) x, float s) -> Tensor");
    ops.impl("scale_", torch::kPrivateUse1, &planted::scale_);
    ops.def("shift_(Tensor(a!) x, float s) -> ()");
    ops.impl("shift_", torch::kPrivateUse1, &planted::shift_);
    ops.def("broken(Tensor x, int) -> Tensor");
    ops.def("late(Tensor x) -> Tensor");
    ops.impl("late", torch::kPrivateUse1, &planted::late);
    ops.def("crashy(Tensor x) -> Tensor");
    ops.impl("crashy", torch::kPrivateUse1, &planted::crashy);
#if defined(PLANTED_NEVER_BUILT)
    ops.def("never(Tensor x) -> Tensor");
#endif
}
