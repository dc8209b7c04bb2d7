// z = x + y, one tile a core; PAD_TAIL: the core's elements moved out with DataCopyPad
// (correct), else with DataCopy rounded up to 32 bytes (past z's end on the last core
// when the size is not a multiple of 32 bytes).
#pragma once
#include "kernel_operator.h"
#include "tail_add_tiling.h"

using namespace AscendC;

template <bool PAD_TAIL>
class KernelTailAdd {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const TailAddTiling* t)
    {
        uint32_t start = GetBlockIdx() * t->perCore;
        count = start + t->perCore > t->total ? t->total - start : t->perCore;
        xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x + start, count);
        yGm.SetGlobalBuffer((__gm__ DTYPE_X*)y + start, count);
        zGm.SetGlobalBuffer((__gm__ DTYPE_X*)z + start, count);
        pipe.InitBuffer(inX, 1, t->perCore * sizeof(DTYPE_X));
        pipe.InitBuffer(inY, 1, t->perCore * sizeof(DTYPE_X));
        pipe.InitBuffer(outZ, 1, t->perCore * sizeof(DTYPE_X));
    }

    __aicore__ inline void Process()
    {
        DataCopyExtParams params{1, static_cast<uint32_t>(count * sizeof(DTYPE_X)), 0, 0, 0};
        DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};
        LocalTensor<DTYPE_X> x = inX.AllocTensor<DTYPE_X>();
        LocalTensor<DTYPE_X> y = inY.AllocTensor<DTYPE_X>();
        DataCopyPad(x, xGm, params, pad);
        DataCopyPad(y, yGm, params, pad);
        inX.EnQue(x);
        inY.EnQue(y);
        x = inX.DeQue<DTYPE_X>();
        y = inY.DeQue<DTYPE_X>();
        LocalTensor<DTYPE_X> z = outZ.AllocTensor<DTYPE_X>();
        Add(z, x, y, count);
        outZ.EnQue(z);
        inX.FreeTensor(x);
        inY.FreeTensor(y);
        z = outZ.DeQue<DTYPE_X>();
        if (PAD_TAIL) {
            DataCopyPad(zGm, z, params);
        } else {
            constexpr uint32_t align = 32 / sizeof(DTYPE_X);
            DataCopy(zGm, z, (count + align - 1) / align * align);
        }
        outZ.FreeTensor(z);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inX, inY;
    TQue<QuePosition::VECOUT, 1> outZ;
    GlobalTensor<DTYPE_X> xGm, yGm, zGm;
    uint32_t count;
};
