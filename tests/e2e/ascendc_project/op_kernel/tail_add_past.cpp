// The tail_add_past kernel entry.
#include "tail_add.h"

extern "C" __global__ __aicore__ void tail_add_past(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TailAddTiling, t, tiling);
    KernelTailAdd<false> op;
    op.Init(x, y, z, &t);
    op.Process();
}
