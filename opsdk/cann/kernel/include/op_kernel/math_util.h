// opsdk stand-in of the kernel-side integer helpers opbase gives kernels (Ops::Base):
// division rounding up or down and alignment to a multiple, rounding up in a type wide
// enough that a + b - 1 does not wrap.
#pragma once
#include <type_traits>
#include "kernel_operator.h"

namespace Ops {
namespace Base {
template <class T>
using Wide = std::conditional_t<(sizeof(T) < 4), uint32_t, uint64_t>;
template <class T>
__aicore__ inline T CeilDiv(T a, T b) { return T((Wide<T>(a) + Wide<T>(b) - 1) / Wide<T>(b)); }
template <class T>
__aicore__ inline T FloorDiv(T a, T b) { return a / b; }
template <class T>
__aicore__ inline T CeilAlign(T a, T b) { return T((Wide<T>(a) + Wide<T>(b) - 1) / Wide<T>(b) * Wide<T>(b)); }
template <class T>
__aicore__ inline T FloorAlign(T a, T b) { return a / b * b; }
}  // namespace Base
}  // namespace Ops
