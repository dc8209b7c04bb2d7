// opsdk stand-in: opbase's op_common/op_host/tiling_base_class.h is op_host/tiling_base_class.h.
#pragma once
#include "op_host/tiling_base_class.h"
