// The listed op: a tensor-list input x and a tensor-list output y, y[i] = x[i] + x[i] for
// each tensor i of the list (each of its own shape, read from the list's block), the
// tensors dealt to the cores in turn, foreach style.
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"
#include "listed_tiling.h"

using namespace AscendC;

class KernelListed {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ListedTiling* t)
    {
        xList.Init(x);
        yList.Init(y);
        tile = t->tile;
        defect = t->defect;
        pipe.InitBuffer(inX, 2, (tile + 16) * sizeof(float));
        pipe.InitBuffer(outY, 2, tile * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t i = GetBlockIdx(); i < xList.GetSize(); i += GetBlockNum()) {
            One(i);
        }
    }

private:
    __aicore__ inline void One(uint32_t i)
    {
        uint64_t dims[8];
        TensorDesc<float> desc;
        desc.SetShapeAddr(dims);
        xList.GetDesc(desc, i);
        uint64_t count = 1;
        for (uint64_t d = 0; d < desc.GetDim(); ++d) {
            count *= desc.GetShape(d);
        }
        xGm.SetGlobalBuffer(xList.GetDataPtr<float>(i), count);
        yGm.SetGlobalBuffer(yList.GetDataPtr<float>(i), count);
        for (uint64_t at = 0; at < count; at += tile) {
            uint32_t n = count - at < tile ? count - at : tile;
            uint32_t read = defect == LISTED_PAST_SECOND && i == 1 && at + n == count ? n + 16 : n;
            LocalTensor<float> a = inX.AllocTensor<float>();
            DataCopyExtParams in{1, static_cast<uint32_t>(read * sizeof(float)), 0, 0, 0};
            DataCopyPad(a, xGm[at], in, DataCopyPadExtParams<float>{false, 0, 0, 0});
            inX.EnQue(a);
            a = inX.DeQue<float>();
            LocalTensor<float> b = outY.AllocTensor<float>();
            Add(b, a, a, n);
            outY.EnQue(b);
            inX.FreeTensor(a);
            b = outY.DeQue<float>();
            DataCopyExtParams out{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
            DataCopyPad(yGm[at], b, out);
            outY.FreeTensor(b);
        }
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inX;
    TQue<QuePosition::VECOUT, 2> outY;
    ListTensorDesc xList, yList;
    GlobalTensor<float> xGm, yGm;
    uint32_t tile = 0, defect = 0;
};

extern "C" __global__ __aicore__ void listed(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(ListedTiling, tilingData, tiling);
    KernelListed op;
    op.Init(x, y, &tilingData);
    op.Process();
}
