// opsdk's stand-in: torch_npu's native functions are not called from Meta code.
#pragma once
#include <ATen/ATen.h>
