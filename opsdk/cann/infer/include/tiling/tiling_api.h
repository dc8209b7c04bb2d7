// opsdk stand-in: CANN's tiling API (tiling/tiling_api.h). Inference sources include it
// beside tiling structs that embed its tiling data; those are named here, without fields
// (inference never fills one), and nothing else of the API is.
#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(TCubeTiling)
END_TILING_DATA_DEF;
}  // namespace optiling
