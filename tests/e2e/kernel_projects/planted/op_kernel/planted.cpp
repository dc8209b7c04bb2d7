// The planted op's kernel entry.
#include "planted.h"

extern "C" __global__ __aicore__ void planted(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(PlantedTiling, tilingData, tiling);
    KernelPlanted op;
    op.Init(x, y, z, workspace, &tilingData);
    op.Process();
}
