// The tail_add_past kernel entry: the unaligned tail written past the end of z.
#include "tail_add.h"

extern "C" __global__ __aicore__ void tail_add_past(GM_ADDR a, GM_ADDR b, GM_ADDR sum, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TailAddTiling, t, tiling);
    KernelTailAdd<false> op;
    op.Init(a, b, sum, &t);
    op.Process();
}
