// opsdk stand-in: what kernels use of this header is in kernel_operator.h.
#pragma once
#include "kernel_operator.h"
