// RowScale's tiling data: rows split over the vector cores, each row in UB chunks.
#pragma once
#include "register/tilingdata_base.h"
#include "register/op_impl_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "log/log.h"
#include "exe_graph/runtime/kernel_run_context.h"  // for nothing of its own, as ops-nn's swi_glu_grad

namespace optiling {
BEGIN_TILING_DATA_DEF(RowScaleTail)
TILING_DATA_FIELD_DEF(uint32_t, rows);
TILING_DATA_FIELD_DEF(uint16_t, chunk);
END_TILING_DATA_DEF;

BEGIN_TILING_DATA_DEF(RowScaleTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);
TILING_DATA_FIELD_DEF(uint32_t, cols);
TILING_DATA_FIELD_DEF(uint64_t, rowsPerCore);
TILING_DATA_FIELD_DEF_ARR(uint16_t, 3, chunks);
TILING_DATA_FIELD_DEF(float, scale);
TILING_DATA_FIELD_DEF_STRUCT(RowScaleTail, tail);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(RowScale, RowScaleTilingData)

// The class of a key the tiling does not choose here (its kernel's branch names it).
BEGIN_TILING_DATA_DEF(RowScaleWideTilingData)
TILING_DATA_FIELD_DEF(uint64_t, width);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(RowScale_2, RowScaleWideTilingData)
REGISTER_TILING_DATA_CLASS(RowScale_3, RowScaleWideTilingData)

// ``string`` and ``map`` unqualified, as ops-nn's norm and quant tilings write them.
inline string RowScaleName() { return map<int, string>{{0, "RowScale"}}.at(0); }
REGISTER_TILING_DATA_CLASS(RowScaleCrash, RowScaleTilingData)
REGISTER_TILING_DATA_CLASS(RowScaleRefuse, RowScaleTilingData)
REGISTER_TILING_DATA_CLASS(RowScaleAllRows, RowScaleTilingData)
REGISTER_TILING_DATA_CLASS(RowScaleLong, RowScaleTilingData)

struct RowScaleCompileInfo {
    uint32_t cores = 0;
    uint64_t ub = 0;
};
}  // namespace optiling
