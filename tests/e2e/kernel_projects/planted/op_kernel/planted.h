// The planted op: z = x + y in float32, split over cores and tiles ops-nn style, the sum
// kept in workspace on its way out; a tiling field plants one defect at a time.
#pragma once
#include "kernel_operator.h"
#include "planted_tiling.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelPlanted {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, const PlantedTiling* t)
    {
        defect = t->defect;
        tile = t->tile;
        uint32_t start = GetBlockIdx() * t->perCore;
        if (defect == SAME_VALUES && GetBlockIdx() > 0) {
            start -= 8;
        }
        uint32_t zStart = defect == OVERLAPPING_CORES && GetBlockIdx() > 0 ? start - 8 : start;
        count = start + t->perCore > t->total ? t->total - start : t->perCore;
        xGm.SetGlobalBuffer((__gm__ float*)x + start, count);
        yGm.SetGlobalBuffer((__gm__ float*)y + start, count);
        zGm.SetGlobalBuffer((__gm__ float*)z + zStart, count);
        zAll.SetGlobalBuffer((__gm__ float*)z, t->total);
        perCore = t->perCore;
        wsGm.SetGlobalBuffer((__gm__ float*)workspace + start, count);
        pipe.InitBuffer(inX, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(inY, BUFFER_NUM, tile * sizeof(float));
        pipe.InitBuffer(outZ, BUFFER_NUM, tile * sizeof(float));
        uint32_t tmpElements = defect == UB_WHOLE_CORE ? count : tile;
        pipe.InitBuffer(tmp, tmpElements * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        if (defect == WILD_POINTER) {
            count = static_cast<uint32_t>(xGm.GetPhyAddr()[1ULL << 40]);
        }
        uint32_t tiles = (count + tile - 1) / tile;
        for (uint32_t i = 0; i < tiles; ++i) {
            uint32_t n = i + 1 == tiles ? count - i * tile : tile;
            if (defect == LAST_ELEMENT && i + 1 == tiles) {
                n -= 1;
            }
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
        if (defect == HANDOFF_SYNCED || (defect == SYNC_ONE_BLOCK && GetBlockIdx() == 0)) {
            SyncAll();
        }
        if ((defect == HANDOFF_SYNCED || defect == HANDOFF_RACE) && GetBlockIdx() == 0) {
            Handoff();
        }
        if (defect == RAW_PAST_END && GetBlockIdx() + 1 == GetBlockNum()) {
            zAll.GetPhyAddr()[zAll.GetSize()] = 0.0f;  // no API call: only the guard zone shows it
        }
    }

private:
    __aicore__ inline void Handoff()
    {
        LocalTensor<float> acc = tmp.Get<float>();
        DataCopyExtParams params{1, 8 * sizeof(float), 0, 0, 0};
        DataCopyPad(acc, zAll[perCore], params, DataCopyPadExtParams<float>{false, 0, 0, 0});
        if (defect == HANDOFF_RACE) {
            Duplicate(acc, 0.0f, 8);  // other values than block 1's: the order decides z
        }
        DataCopyPad(zAll[perCore], acc, params);
    }

    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<float> x = inX.AllocTensor<float>();
        LocalTensor<float> y = inY.AllocTensor<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        if (defect == TAIL_READ_BLOCKS) {
            DataCopy(x, xGm[i * tile], (n + 7) / 8 * 8);
        } else {
            DataCopyPad(x, xGm[i * tile], params, pad);
        }
        DataCopyPad(y, yGm[i * tile], params, pad);
        inX.EnQue(x);
        inY.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> x = inX.DeQue<float>();
        LocalTensor<float> y = inY.DeQue<float>();
        if (defect == DEQUE_AGAIN) {
            y = inY.DeQue<float>();
        }
        LocalTensor<float> z = outZ.AllocTensor<float>();
        Add(z, x, y, n);
        outZ.EnQue(z);
        if (defect != QUEUE_LEAK) {
            inX.FreeTensor(x);
        }
        inY.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<float> z = outZ.DeQue<float>();
        LocalTensor<float> acc = tmp.Get<float>();
        DataCopyExtParams params{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        if (defect == WORKSPACE_FIRST) {
            DataCopyPad(acc, wsGm[i * tile], params, pad);
            Add(z, z, acc, n);
        }
        DataCopyPad(wsGm[i * tile], z, params);
        DataCopyPad(acc, wsGm[i * tile], params, pad);
        if (defect == TAIL_DATACOPY) {
            DataCopy(zGm[i * tile], acc, (n + 7) / 8 * 8);
        } else if (defect == ADD_INTO_Z) {
            SetAtomicAdd<float>();
            DataCopyPad(zGm[tile * i], acc, params);
            SetAtomicNone();
        } else {
            DataCopyPad(zGm[i * tile], acc, params);
        }
        outZ.FreeTensor(z);
        if (defect == DOUBLE_FREE) {
            outZ.FreeTensor(z);
        }
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inX, inY;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outZ;
    TBuf<TPosition::VECCALC> tmp;
    GlobalTensor<float> xGm, yGm, zGm, wsGm, zAll;
    uint32_t count, tile, defect, perCore;
};
