// The tail_add kernel entry (its GM parameters named otherwise than the IR: GE passes them by position).
#include "tail_add.h"

extern "C" __global__ __aicore__ void tail_add(GM_ADDR a, GM_ADDR b, GM_ADDR sum, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TailAddTiling, t, tiling);
    KernelTailAdd<true> op;
    op.Init(a, b, sum, &t);
    op.Process();
}
