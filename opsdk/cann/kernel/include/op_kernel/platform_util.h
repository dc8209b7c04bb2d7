// opsdk stand-in of opbase's kernel-side platform constants (Ops::Base): a UB block and
// a vector register's width in bytes, the chip's (kernel_operator.h's).
#pragma once
#include "kernel_operator.h"

namespace Ops {
namespace Base {
__aicore__ inline constexpr uint32_t GetUbBlockSize() { return AscendC::GetUbBlockSize(); }
__aicore__ inline constexpr uint32_t GetVRegSize() { return AscendC::GetVRegSize(); }
}  // namespace Base
}  // namespace Ops
