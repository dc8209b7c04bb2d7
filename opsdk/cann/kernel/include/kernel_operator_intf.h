// opsdk stand-in: the kernel API this header declares is in kernel_operator.h.
#pragma once
#include "kernel_operator.h"
