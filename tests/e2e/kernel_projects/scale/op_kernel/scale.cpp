// The scale op: y = x * scale in float16 through float32, its tiling data declared with
// BEGIN_TILING_DATA_DEF on the host (the kernel-side struct is generated), its tiling key
// a template argument: 0 the count form of the vector instructions, 1 the level-0
// mask/repeat form.
#include "kernel_operator.h"
#include "scale_tiling_key.h"

using namespace AscendC;

template <uint32_t MODE>
__global__ __aicore__ void scale(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    uint32_t start = GetBlockIdx() * t.split.perCore;
    uint32_t count = start + t.split.perCore > t.total ? t.total - start : t.split.perCore;
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + start, count);
    yGm.SetGlobalBuffer((__gm__ half*)y + start, count);
    TPipe pipe;
    TBuf<TPosition::VECCALC> inBuf, calcBuf;
    pipe.InitBuffer(inBuf, t.split.perCore * sizeof(half) + 32);
    pipe.InitBuffer(calcBuf, t.split.perCore * sizeof(float) + 256);
    LocalTensor<half> h = inBuf.Get<half>();
    LocalTensor<float> f = calcBuf.Get<float>();
    DataCopyPad(h, xGm, {1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, 0}, {false, 0, 0, 0});
    if constexpr (MODE == 0) {
        Cast(f, h, RoundMode::CAST_NONE, count);
        Muls(f, f, t.scale, count);
        Cast(h, f, RoundMode::CAST_RINT, count);
    } else {
        uint32_t full = count / 64, rest = count % 64;
        UnaryRepeatParams widen{1, 1, 8, 4}, same{1, 1, 8, 8}, narrow{1, 1, 4, 8};
        if (full > 0) {
            Cast(f, h, RoundMode::CAST_NONE, 64, full, widen);
            Muls(f, f, t.scale, 64, full, same);
            Cast(h, f, RoundMode::CAST_RINT, 64, full, narrow);
        }
        if (rest > 0) {
            SetVectorMask<float>(0, (1ULL << rest) - 1);
            Cast<float, half, false>(f[full * 64], h[full * 64], RoundMode::CAST_NONE, MASK_PLACEHOLDER, 1, widen);
            Muls<float, false>(f[full * 64], f[full * 64], t.scale, MASK_PLACEHOLDER, 1, same);
            Cast<half, float, false>(h[full * 64], f[full * 64], RoundMode::CAST_RINT, MASK_PLACEHOLDER, 1, narrow);
            ResetMask();
        }
    }
    DataCopyPad(yGm, h, {1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, 0});
}
