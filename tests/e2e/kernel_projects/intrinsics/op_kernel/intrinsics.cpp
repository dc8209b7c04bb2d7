// One instruction of opsdk's AscendC stand-in, the tiling's `which`, over `count` float32
// (at most 128: 512 B), y = f(x), for tests/e2e/test_kernel_intrinsics.py to hold
// its arithmetic against torch (one library for all). 0-9 pass the instruction as a
// template argument of a function pointer type, as ops-nn's foreach kernels do; 10- call it.
#include "kernel_operator.h"
#include "lib/math/kernel_operator_acos_intf.h"
#include "op_kernel/math_util.h"
#include "op_kernel/platform_util.h"

using namespace AscendC;

struct IntrinsicsTiling {
    uint32_t count;
    uint32_t which;
};

template <class T>
using Unary = void(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&);
template <class T>
using Binary = void(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&);
template <class T>
using BinaryLevel0 = void(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<T>&, uint64_t, const uint8_t,
                          const BinaryRepeatParams&);
template <class T>
using WithScalar = void(const LocalTensor<T>&, const LocalTensor<T>&, const T&, const int32_t&);
template <class T>
using Math = void(const LocalTensor<T>&, const LocalTensor<T>&, const uint32_t);

template <Unary<float>* op>
void unary(const LocalTensor<float>& y, const LocalTensor<float>& x, int32_t n) { op(y, x, n); }
template <Binary<float>* op>
void binary(const LocalTensor<float>& y, const LocalTensor<float>& x, int32_t n) { op(y, x, x, n); }
template <BinaryLevel0<float>* op>
void binary0(const LocalTensor<float>& y, const LocalTensor<float>& x, int32_t n) {
    BinaryRepeatParams same;
    op(y, x, x, uint64_t(n), 1, same);
}
template <WithScalar<float>* op>
void scalar(const LocalTensor<float>& y, const LocalTensor<float>& x, int32_t n) { op(y, x, 0.5f, n); }
template <Math<float>* op>
void math(const LocalTensor<float>& y, const LocalTensor<float>& x, int32_t n) { op(y, x, uint32_t(n)); }

// A queue's configuration given as its third template argument, as ops-nn's mse_loss_grad_v2 does.
constexpr TQueConfig queConfig{false, false, false, 0, 1, 0, {TPosition::MAX}};

// Qualified with the pipe it runs on, as ops-transformer's moe kernels write their copies.
__aicore__ inline __inout_pipe__(MTE2) void copy_in(const LocalTensor<float>& to, const GlobalTensor<float>& from,
                                                      const DataCopyExtParams& whole)
{
    DataCopyPadGm2UBImpl((__ubuf__ float*)to.GetPhyAddr(), (__gm__ float*)from.GetPhyAddr(), whole,
                         DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
}

extern "C" __global__ __aicore__ void intrinsics(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(IntrinsicsTiling);  // the plain struct GET_TILING_DATA reads
    GET_TILING_DATA(t, tiling);
    int32_t n = int32_t(t.count);
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, n);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4 * 512);
    LocalTensor<float> xs = buf.Get<float>(128), ys = buf.Get<float>()[128], aux = buf.Get<float>()[256];
    LocalTensor<uint8_t> bits = buf.Get<uint8_t>()[3 * 512];
    DataCopyPad(xs, xGm, {1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0}, {false, 0, 0, 0});
    if (t.which == 0) unary<Exp>(ys, xs, n);
    if (t.which == 1) binary<Mul>(ys, xs, n);
    if (t.which == 2) binary0<Sub>(ys, xs, n);  // x - x
    if (t.which == 3) scalar<Adds>(ys, xs, n);
    if (t.which == 4) math<Acos<float, false>>(ys, xs, n);
    if (t.which == 20) {  // 16 blocks of 8 float32: x as a 16 x 8 matrix transposed
        LocalTensor<float> dst[NCHW_CONV_ADDR_LIST_SIZE], src[NCHW_CONV_ADDR_LIST_SIZE];
        for (int i = 0; i < 16; ++i) {
            src[i] = xs[i * 8];
            dst[i] = ys[i * 8];
        }
        TransDataTo5HD<float>(dst, src, TransDataTo5HDParams(false, false, 1, 0, 0));
    }
    if (t.which == 21 || t.which == 22 || t.which == 25 || t.which == 34) {  // 16 blocks of 16 int16: a 16 x 16 matrix
        LocalTensor<int16_t> x16 = xs.ReinterpretCast<int16_t>(), y16 = ys.ReinterpretCast<int16_t>();
        uint64_t dst[NCHW_CONV_ADDR_LIST_SIZE], src[NCHW_CONV_ADDR_LIST_SIZE];
        for (int i = 0; i < 16; ++i) {
            src[i] = reinterpret_cast<uint64_t>(x16[i * 16].GetPhyAddr());
            dst[i] = reinterpret_cast<uint64_t>(y16[i * 16].GetPhyAddr());
        }
        if (t.which == 21) TransDataTo5HD<int16_t>(dst, src, TransDataTo5HDParams(false, false, 1, 0, 0));
        if (t.which == 22) Transpose(y16, x16);
        if (t.which == 34) AscendC::Xor(y16, x16, x16[128], 128);  // the halves' bits
        if (t.which == 25) {  // the Impl form: lists of UB pointers
            int16_t* to[NCHW_CONV_ADDR_LIST_SIZE];
            int16_t* from[NCHW_CONV_ADDR_LIST_SIZE];
            for (int i = 0; i < 16; ++i) {
                to[i] = y16[i * 16].GetPhyAddr();
                from[i] = x16[i * 16].GetPhyAddr();
            }
            TransDataTo5HDImpl(to, from, TransDataTo5HDParams(false, false, 1, 0, 0));
        }
    }
    if (t.which == 23) {  // int8 in two calls: the blocks' low halves, then their high halves
        LocalTensor<int8_t> x8 = xs.ReinterpretCast<int8_t>(), y8 = ys.ReinterpretCast<int8_t>();
        uint64_t dst[NCHW_CONV_ADDR_LIST_SIZE], src[NCHW_CONV_ADDR_LIST_SIZE];
        for (int i = 0; i < 16; ++i) {
            src[i] = reinterpret_cast<uint64_t>(x8[i * 32].GetPhyAddr());
            dst[i] = reinterpret_cast<uint64_t>(y8[i * 32].GetPhyAddr());
        }
        TransDataTo5HD<int8_t>(dst, src, TransDataTo5HDParams(false, false, 1, 0, 0));
        TransDataTo5HD<int8_t>(dst, src, TransDataTo5HDParams(true, true, 1, 0, 0));
    }
    if (t.which == 24) {  // opbase's kernel-side helpers
        ys.SetValue(0, Ops::Base::CeilDiv(uint16_t(65535), uint16_t(2)));  // no wrap at 65535 + 1
        ys.SetValue(1, Ops::Base::CeilAlign(5u, 4u));
        ys.SetValue(2, Ops::Base::FloorDiv(7, 2));
        ys.SetValue(3, Ops::Base::FloorAlign(7, 4));
        ys.SetValue(4, Ops::Base::GetUbBlockSize());
        ys.SetValue(5, GetDataBlockSizeInBytes());
        ys.SetValue(6, buf.AllocTensor<float>().GetPhyAddr() == buf.Get<float>().GetPhyAddr());  // a TBuf's one buffer
    }
    if (t.which >= 26 && t.which <= 29) {  // Select between x and -1 where x > 0.5, 2 repeats
        if (t.which == 26) Compares(bits, xs, 0.5f, CMPMODE::GT, 128);  // CompareScalar's other name
        if (t.which != 26) CompareScalar(bits, xs, 0.5f, CMPMODE::GT, 128);
        Duplicate(aux, -1.0f, 128);
        Duplicate(ys, 7.0f, 128);
        BinaryRepeatParams same;
        if (t.which == 26) Select(ys, bits, xs, aux, SELMODE::VSEL_TENSOR_TENSOR_MODE, 64, 2, same);
        if (t.which == 27) Select(ys, bits, xs, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 40, 2, same);  // 40 of 64
        if (t.which == 28) Select(ys, bits, xs, aux, SELMODE::VSEL_CMPMASK_SPR, 64, 2, same);  // the first 64 bits twice
        if (t.which == 29) Select(ys, bits, xs, aux, SELMODE::VSEL_CMPMASK_SPR, 128);
    }
    if (t.which >= 30 && t.which <= 32) {  // 64 scores sorted with their indices: values, then indices
        LocalTensor<float> pairs = buf.Get<float>()[384];
        LocalTensor<uint32_t> index = ys.ReinterpretCast<uint32_t>();
        CreateVecIndex(index.ReinterpretCast<int32_t>(), 0, 64);
        if (t.which == 30) Sort<float, true>(pairs, xs, index, aux, 2);
        if (t.which == 31) Sort<float, false>(pairs, xs, index, aux, 2);
        if (t.which == 32) Sort32(pairs, xs, index, 2);
        Extract(aux, index[64], pairs, 2);
        DataCopy(ys, aux, 64);
        Cast(ys[64], ys.ReinterpretCast<int32_t>()[64], RoundMode::CAST_NONE, 64);
    }
    if (t.which == 35) {  // 64 scores in two Sort32 runs, merged by MrgSort: values, then indices
        LocalTensor<float> pairs = buf.Get<float>()[384];
        LocalTensor<uint32_t> index = ys.ReinterpretCast<uint32_t>();
        CreateVecIndex(index.ReinterpretCast<int32_t>(), 0, 64);
        Sort32(pairs, xs, index, 2);
        MrgSortSrcList<float> runs(pairs, pairs[GetSortOffset<float>(32)], pairs, pairs);
        const uint16_t lengths[4] = {32, 32, 0, 0};
        MrgSort(ys, runs, MrgSort4Info(lengths, false, 0b0011, 1));
        Extract(aux, index[64], ys, 2);
        DataCopy(ys, aux, 64);
        Cast(ys[64], ys.ReinterpretCast<int32_t>()[64], RoundMode::CAST_NONE, 64);
    }
    if (t.which == 36) {  // Concat's scores into a tensor never allocated, and sorted pairs' sizes
        LocalTensor<float> concat;
        Concat(concat, xs, aux, 4);
        DataCopy(ys, concat, 64);
        ys.SetValue(64, GetSortLen<float>(32));
        ys.SetValue(65, GetSortOffset<half>(8));
    }
    if (t.which >= 37 && t.which <= 39) {  // x > 0.5 in bits by the level-0 Compare, Select x or -1
        Duplicate(ys, 0.5f, 128);
        BinaryRepeatParams same;
        if (t.which == 37) Compare(bits, xs, ys, CMPMODE::GT, 64, 2, same);
        if (t.which == 39) bits = xs > ys;  // the operator form: all 128 of xs
        if (t.which == 38) {  // the compare-mask register: the first 64 only
            Compare(xs, ys, CMPMODE::GT, 64, same);
            GetCmpMask(bits);
        }
        Duplicate(aux, -1.0f, 128);
        Select(ys, bits, xs, aux, t.which == 38 ? SELMODE::VSEL_CMPMASK_SPR : SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
    }
    if (t.which == 40 || t.which == 41) {  // each block's 8 through workspace to the previous block
        GlobalTensor<float> ws;
        ws.SetGlobalBuffer((__gm__ float*)workspace, GetBlockNum() * 8);
        uint32_t me = GetBlockIdx(), next = (me + 1) % GetBlockNum();
        DataCopy(aux, xGm[me * 8], 8);
        DataCopy(ws[me * 8], aux, 8);
        if (t.which == 40 || me != 0) CrossCoreSetFlag<0x0, PIPE_MTE3>(3);  // 41: block 0 never sets
        CrossCoreWaitFlag(3);
        DataCopy(ys, ws[next * 8], 8);
        DataCopy(yGm[me * 8], ys, 8);
        return;
    }
    if (t.which == 42) {  // raw-address copies in and out; ScalarCast of the first 8
        xGm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);  // a hint: the same numbers
        DataCopyExtParams whole{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
        copy_in(aux, xGm, whole);
        DataCopy(ys, aux, 128);
        for (int i = 0; i < 8; ++i) {
            ys.SetValue(i, float(ScalarCast<float, half, RoundMode::CAST_RINT>(aux.GetValue(i))));
            ys.SetValue(8 + i, float(ScalarCast<float, int32_t, RoundMode::CAST_FLOOR>(aux.GetValue(i) * 100)));
        }
        DataCopyPadUB2GMImpl((__gm__ float*)yGm.GetPhyAddr(), (__ubuf__ float*)ys.GetPhyAddr(), whole);
        return;
    }
    if (t.which == 43) {  // the first 16 of x, each repeated along a row of 8
        const uint32_t dstShape[2] = {16, 8}, srcShape[2] = {16, 1};
        Broadcast<float, 2, 1>(ys, xs, dstShape, srcShape);
    }
    if (t.which == 44) {  // x read through a tensor made at x's UB byte address; then 3 + 0.5 i
        LocalTensor<float> again(TPosition::VECCALC, 0, 128);  // the TBuf starts UB
        DataCopy(ys, again, 64);
        ArithProgression<float>(ys[64], int64_t(3), 0.5f, int64_t(64));
    }
    if (t.which == 45) {  // padding params of another element type: 7 copied in, padded with 2
        DataCopyPadExtParams<int32_t> pad{true, 0, 1, 2};
        Duplicate(ys, -1.0f, 128);
        DataCopyPad(ys, xGm, DataCopyExtParams{1, 7 * sizeof(float), 0, 0, 0}, pad);
    }
    if (t.which == 46) {  // Sum of 4 rows of 16 (13 of them real) into ys[0..3]
        Duplicate(ys, 0.0f, 128);
        SumParams rows{4, 16, 13};
        Sum(ys, xs, buf.Get<uint8_t>()[3 * 512], rows);
    }
    if (t.which == 47) {  // x through the UB the pipe has not given out, by raw addresses; its size
        LocalTensor<float> rest;
        PopStackBuffer<float, TPosition::LCM>(rest);
        DataCopy(rest, xs, 128);
        DataCopyUB2GMImpl((__gm__ float*)yGm.GetPhyAddr(), (__ubuf__ float*)rest.GetPhyAddr(), {1, 16, 0, 0});
        yGm.SetValue(0, rest.GetSize());
        return;
    }
    if (t.which == 48) {  // scalar helpers, a GM element read as xGm(i), a configured queue
        TQue<TPosition::VECIN, 1, &queConfig> configured;
        pipe.InitBuffer(configured, 1, 32);
        configured.FreeTensor(configured.AllocTensor<float>());
        ys.SetValue(0, Ceil(int64_t(7), int64_t(2)));
        ys.SetValue(1, Ceil(uint8_t(9), sizeof(float) * 2));
        ys.SetValue(2, Std::min(3, int64_t(-1)));
        ys.SetValue(3, Std::max(2, 5.5));
        ys.SetValue(4, xGm(3));
        ys.SetValue(5, Cast(bfloat16_t(xGm(0))));
        ys.SetValue(6, Std::is_same<float, float>::value + Std::is_same<half, float>::value);
        constexpr half halves[3] = {3, 2049, -65519};  // a constexpr table (ops-math lin_space's)
        constexpr bfloat16_t wide = 257;
        for (int i = 0; i < 3; ++i) ys.SetValue(7 + i, float(halves[i]));
        ys.SetValue(10, float(wide));
    }
    if (t.which == 49) {  // copies from and to 1 MiB past the UB's start: findings, nothing moved
        LocalTensor<float> far(TPosition::VECCALC, 1 << 20, 128);
        DataCopy(ys, xs, 128);
        DataCopy(ys, far, DataCopyParams(1, 16, 0, 0));
        Sort32(far, xs, ys.ReinterpretCast<uint32_t>(), 2);
        InitGlobalMemory(yGm, uint64_t(int64_t(n) - 200), 0.0f);  // a length computed negative
    }
    if (t.which == 10) Log10(ys, xs, uint32_t(n));
    if (t.which == 11) Tan(ys, xs, uint32_t(n));
    if (t.which == 12) Asin(ys, xs, uint32_t(n));
    if (t.which == 13) Atan(ys, xs, uint32_t(n));
    if (t.which == 14) Sinh(ys, xs, uint32_t(n));
    if (t.which == 15) Cosh(ys, xs, uint32_t(n));
    if (t.which == 16) Erfc(ys, xs, uint32_t(n));
    if (t.which == 17) Power(ys, 2.0f, xs, uint32_t(n));  // 2 ** x
    if (t.which == 18) {  // the sum of x in every element, through GetAccVal<float>
        ReduceSum(ys, xs, ys, n);
        Duplicate(ys, GetAccVal<float>(), n);
    }
    DataCopyPad(yGm, ys, {1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0});
}
