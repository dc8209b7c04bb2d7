// opsdk's stand-in for AscendC's kernel API (kernel_operator.h), for running a vector
// kernel on the CPU: every block a thread, GM and UB accesses checked (opsdk_kernel_rt.h).
// Written by opsdk from how kernels use the API and from its public documentation; no CANN
// header is copied. Pipe-level synchronisation (SetFlag/WaitFlag, PipeBarrier) is not
// modelled: each instruction completes before the next starts.
#pragma once
#include "opsdk_kernel_rt.h"
#include "opsdk_kernel_types.h"

#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __inline__ inline
#define __in_pipe__(...)
#define __out_pipe__(...)
#define __inout_pipe__(...)
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ 220
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#define __DAV_C220_VEC__ 1
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#define ASSERT(x) ((void)0)
#define ascendc_assert(...) ((void)0)
#define TRACE_START(x)
#define TRACE_STOP(x)
#define KERNEL_TASK_TYPE_DEFAULT(x)
#define KERNEL_TASK_TYPE(key, x)
// REGISTER_TILING_DEFAULT names the tiling data's plain struct, which GET_TILING_DATA then
// reads; a BEGIN_TILING_DATA_DEF op's GET_TILING_DATA is generated from its layout instead
// (build.py), replacing this one.
#define REGISTER_TILING_DEFAULT(T) using OpsdkTilingDefault = T
#define GET_TILING_DATA(var, tiling) GET_TILING_DATA_WITH_STRUCT(OpsdkTilingDefault, var, tiling)
#define REGISTER_TILING_FOR_TILINGKEY(cond, T)
#define TILING_KEY_IS(k) (opsdk_rt::g.tiling_key == static_cast<uint64_t>(k))
#define TILING_KEY_VAR (opsdk_rt::g.tiling_key)
#define GET_TILING_DATA_WITH_STRUCT(T, var, tiling) \
    T var;                                          \
    opsdk_rt::read_tiling(&var, tiling, sizeof(T))
#define GET_TILING_DATA_PTR_WITH_STRUCT(T, var, tiling) \
    const T* var = reinterpret_cast<const T*>(tiling)
#define GET_TILING_DATA_MEMBER(T, member, var, tiling) \
    decltype(T::member) var;                           \
    opsdk_rt::read_tiling(&var, tiling + offsetof(T, member), sizeof(var))
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)

typedef uint8_t* GM_ADDR;
#define OPSDK_WHERE const char *file = __builtin_FILE(), int line = __builtin_LINE()
// A kernel passing an instruction as a function pointer (a template argument of a type
// like `void(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t&)`) needs the
// exact signature, which the located forms' defaulted file and line do not have. Each
// such instruction has a form of that signature whose parameters in question are
// template parameters held to the exact type (OPSDK_EXACT): a call still prefers the
// located form (more specialised), a pointer finds this one; its findings name no line.
#define OPSDK_EXACT(P, T) std::enable_if_t<std::is_same_v<P, T>, int> = 0
#define OPSDK_NOWHERE "(an instruction called through a pointer)", 0

// The CCE compiler's own (global) enums of pipes and events.
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace opsdk_rt {
inline void read_tiling(void* dst, const uint8_t* src, uint64_t n,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (gm_access(src, n, false, file, line)) std::memcpy(dst, src, n);
}
template <class T> using Calc = std::conditional_t<std::is_integral_v<T>, int64_t, float>;
template <class T> inline T store(Calc<T> v) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
    else return T(v);
}
}  // namespace opsdk_rt

namespace AscendC {

enum CoreType { AIC = 1, AIV = 2, MIX = 3 };
enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;
enum class HardEvent : uint8_t { MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX };
using ::pipe_t;
using ::event_t;
using TEventID = int8_t;
// CacheMode: a GlobalTensor's L2 cache hint (SetL2CacheHint), which changes no number.
enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL };
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD, CAST_HYBRID };
enum class MaskMode { NORMAL = 0, COUNTER };
enum class CMPMODE { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder { ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class AtomicDtype { ATOMIC_NONE = 0, ATOMIC_F32, ATOMIC_F16, ATOMIC_S16, ATOMIC_S32, ATOMIC_S8, ATOMIC_BF16 };
enum class AtomicOp { ATOMIC_SUM = 0 };

constexpr int32_t ONE_BLK_SIZE = 32;
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr int32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr int32_t MAX_REPEAT_TIMES = 255;
constexpr int32_t BLOCK_CUBE = 16;
constexpr int32_t ONE_BYTE_BIT_SIZE = 8;
constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr int32_t TOTAL_UB_SIZE = 196608;
constexpr int32_t TOTAL_VEC_LOCAL_SIZE = 196608;
constexpr int32_t VECTOR_REG_WIDTH = 256;
constexpr int32_t ONE_BLK_FLOAT_NUM = 8;
constexpr int32_t ONE_BLK_HALF_NUM = 16;
constexpr int32_t BRCB_BROADCAST_NUMBER = 8;

struct BinaryRepeatParams {
    uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
    uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t d, uint8_t s0, uint8_t s1, uint8_t dr, uint8_t s0r, uint8_t s1r)
        : dstBlkStride(d), src0BlkStride(s0), src1BlkStride(s1), dstRepStride(dr), src0RepStride(s0r), src1RepStride(s1r) {}
};
struct UnaryRepeatParams {
    uint16_t dstBlkStride = 1, srcBlkStride = 1;
    uint8_t dstRepStride = 8, srcRepStride = 8;
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t d, uint16_t s, uint8_t dr, uint8_t sr)
        : dstBlkStride(d), srcBlkStride(s), dstRepStride(dr), srcRepStride(sr) {}
};
struct DataCopyParams {
    uint16_t blockCount = 1, blockLen = 0, srcStride = 0, dstStride = 0;
    DataCopyParams() = default;
    DataCopyParams(uint16_t c, uint16_t l, uint16_t s, uint16_t d) : blockCount(c), blockLen(l), srcStride(s), dstStride(d) {}
};
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0, srcStride = 0, dstStride = 0, rsv = 0;
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t c, uint32_t l, uint32_t s, uint32_t d, uint32_t r)
        : blockCount(c), blockLen(l), srcStride(s), dstStride(d), rsv(r) {}
};
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    uint64_t paddingValue = 0;
    DataCopyPadParams() = default;
    DataCopyPadParams(bool p, uint8_t l, uint8_t r, uint64_t v) : isPad(p), leftPadding(l), rightPadding(r), paddingValue(v) {}
};
template <class T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0, rightPadding = 0;
    T paddingValue = T(0);
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool p, uint8_t l, uint8_t r, T v) : isPad(p), leftPadding(l), rightPadding(r), paddingValue(v) {}
};

// ---------------------------------------------------------------- tensors
template <class T> struct WholeCompare;

template <class T>
class LocalTensor {
public:
    using PrimType = T;
    T* addr_ = nullptr;
    uint32_t size_ = 0;  // elements
    LocalTensor() = default;
    LocalTensor(T* a, uint32_t n) : addr_(a), size_(n) {}
    // A tensor at a UB byte address the kernel manages itself (no TPipe buffer).
    LocalTensor(TPosition, uint32_t byteAddr, uint32_t n) : addr_(reinterpret_cast<T*>(opsdk_rt::t_ub + byteAddr)), size_(n) {}
    LocalTensor operator[](uint32_t offset) const { return LocalTensor(addr_ + offset, size_ > offset ? size_ - offset : 0); }
    T GetValue(uint32_t i) const { return addr_[i]; }
    template <class U> void SetValue(uint32_t i, U v) const { addr_[i] = T(v); }
    T& operator()(uint32_t i) const { return addr_[i]; }
    template <class U> LocalTensor<U> ReinterpretCast() const {
        return LocalTensor<U>(reinterpret_cast<U*>(addr_), uint32_t(uint64_t(size_) * sizeof(T) / sizeof(U)));
    }
    uint32_t GetSize() const { return size_; }
    uint32_t GetLength() const { return size_ * sizeof(T); }
    void SetSize(uint32_t n) { size_ = n; }
    T* GetPhyAddr() const { return addr_; }
    T* GetPhyAddr(uint32_t offset) const { return addr_ + offset; }
    void SetAddrWithOffset(const LocalTensor& src, uint32_t offset) { addr_ = src.addr_ + offset; }
    template <class U> void SetAddrWithOffset(const LocalTensor<U>& src, uint32_t offset) {
        addr_ = reinterpret_cast<T*>(src.addr_ + offset);
    }
    // dst = a < b (and the other comparisons): Compare over all of a's elements.
    template <class S> LocalTensor& operator=(const WholeCompare<S>& c) {
        Compare(*this, c.a, c.b, c.mode, c.a.GetSize(), OPSDK_NOWHERE);
        return *this;
    }
    void SetUserTag(int32_t) {}
    int32_t GetUserTag() const { return 0; }
    TPosition GetPosition() const { return TPosition::VECCALC; }
};

template <class T>
class GlobalTensor {
public:
    using PrimType = T;
    T* addr_ = nullptr;
    uint64_t size_ = 0;
    void SetGlobalBuffer(__gm__ T* p, uint64_t n = 0) { addr_ = p; size_ = n; }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor t;
        t.addr_ = addr_ + offset;
        t.size_ = size_ > offset ? size_ - offset : 0;
        return t;
    }
    T GetValue(uint64_t i, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        T v{};
        if (opsdk_rt::gm_access(addr_ + i, sizeof(T), false, file, line)) std::memcpy(&v, addr_ + i, sizeof(T));
        return v;
    }
    template <class U>
    void SetValue(uint64_t i, U v, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        T t = T(v);
        opsdk_rt::gm_access(addr_ + i, sizeof(T), true, file, line, &t);
    }
    T* GetPhyAddr() const { return addr_; }
    T* GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }
    template <class... A> void SetL2CacheHint(A...) {}
    // The element itself (a scalar read of GM, checked as one).
    T& operator()(uint64_t i, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        opsdk_rt::gm_access(addr_ + i, sizeof(T), false, file, line);
        return addr_[i];
    }
};

// ---------------------------------------------------------------- pipe, queues, buffers
class TPipe;
struct QueBuffer {
    uint8_t* addr;
    uint32_t len;
    int state;  // 0 free, 1 allocated, 2 queued
};

class TQueBase {
public:
    std::vector<QueBuffer> bufs_;
    std::vector<int> fifo_;
    int last_ = -1;  // the buffer DeQue handed out last
    int find(const void* p, const char* file, int line) {
        for (size_t i = 0; i < bufs_.size(); ++i)
            if (bufs_[i].addr == p) return int(i);
        opsdk_rt::finding("queue-misuse", file, line, "a tensor that is no buffer of this queue is enqueued or freed");
        return -1;
    }
    template <class T>
    LocalTensor<T> AllocTensor(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        if (bufs_.empty()) opsdk_rt::stop("queue-misuse", file, line, "AllocTensor on a queue InitBuffer never gave buffers");
        for (auto& b : bufs_)
            if (b.state == 0) {
                b.state = 1;
                return LocalTensor<T>(reinterpret_cast<T*>(b.addr), b.len / sizeof(T));
            }
        opsdk_rt::stop("queue-misuse", file, line,
                       opsdk_rt::fmt("AllocTensor with no free buffer (all %zu in use): the core would wait forever", bufs_.size()));
    }
    template <class T>
    void AllocTensor(LocalTensor<T>& t, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        t = AllocTensor<T>(file, line);
    }
    template <class T>
    bool EnQue(const LocalTensor<T>& t, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        int i = find(t.addr_, file, line);
        if (i < 0) return false;
        if (bufs_[i].state != 1)
            opsdk_rt::finding("queue-misuse", file, line, "EnQue of a buffer that is not allocated");
        bufs_[i].state = 2;
        fifo_.push_back(i);
        return true;
    }
    template <class T = uint8_t>
    LocalTensor<T> DeQue(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        if (fifo_.empty() && last_ < 0) opsdk_rt::stop("queue-misuse", file, line, "DeQue on a queue nothing was ever enqueued on");
        if (fifo_.empty()) {
            // AscendC's CPU debug mode asserts here; the NPU hands back the buffer of the
            // queue's slot (a depth-1 queue's last one) without waiting, as here.
            opsdk_rt::finding("queue-misuse", file, line,
                              "DeQue with nothing enqueued since the last DeQue (AscendC's CPU debug mode asserts; "
                              "the NPU hands back the last buffer again)");
            return LocalTensor<T>(reinterpret_cast<T*>(bufs_[last_].addr), bufs_[last_].len / sizeof(T));
        }
        int i = last_ = fifo_.front();
        fifo_.erase(fifo_.begin());
        bufs_[i].state = 1;
        return LocalTensor<T>(reinterpret_cast<T*>(bufs_[i].addr), bufs_[i].len / sizeof(T));
    }
    template <class T>
    void DeQue(LocalTensor<T>& t, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        t = DeQue<T>(file, line);
    }
    template <class T>
    void FreeTensor(const LocalTensor<T>& t, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        int i = find(t.addr_, file, line);
        if (i < 0) return;
        if (bufs_[i].state == 0) opsdk_rt::finding("queue-misuse", file, line, "FreeTensor of a buffer already free (double free)");
        else if (bufs_[i].state == 2) opsdk_rt::finding("queue-misuse", file, line, "FreeTensor of a buffer still in the queue");
        bufs_[i].state = 0;
    }
    // TQueBind's forms naming the positions a tensor moves between.
    template <TPosition from, TPosition to, class T>
    bool EnQue(const LocalTensor<T>& t, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return EnQue(t, file, line);
    }
    template <TPosition from, TPosition to, class T>
    LocalTensor<T> DeQue(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        return DeQue<T>(file, line);
    }
    bool HasTensorInQue() const { return !fifo_.empty(); }
    int32_t GetTensorCountInQue() const { return int32_t(fifo_.size()); }
    bool VacantInQue() const {
        for (auto& b : bufs_) if (b.state == 0) return true;
        return false;
    }
    bool HasIdleBuffer() const { return VacantInQue(); }
    void FreeAllEvent() {}
};

// TQueConfig: what a queue's third template argument (`const TQueConfig*`) says of its
// buffers (format conversions, a fixed buffer size and count, consumers); the stand-in
// gives the buffers InitBuffer asks for whatever it says.
struct TQueConfig {
    bool nd2nz = false, nz2nd = false, scmBlockGroup = false;
    uint32_t bufferLen = 0, bufferNumber = 0, consumerSize = 0;
    TPosition consumer[8] = {};
    bool enableStaticEvtId = false, enableLoopQueue = false;
};

template <TPosition pos, int32_t depth = 1, auto... rest>
class TQue : public TQueBase {};
template <TPosition src, TPosition dst, int32_t depth = 1, auto... rest>
class TQueBind : public TQueBase {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    uint8_t* addr_ = nullptr;
    uint32_t len_ = 0;
    template <class T> LocalTensor<T> Get() const { return LocalTensor<T>(reinterpret_cast<T*>(addr_), len_ / sizeof(T)); }
    template <class T> LocalTensor<T> Get(uint32_t n) const { return LocalTensor<T>(reinterpret_cast<T*>(addr_), n); }
    // A TBuf is a queue binding of one buffer that is never enqueued: AllocTensor gives
    // that buffer (as Get), and its tensors need no release.
    template <class T> LocalTensor<T> AllocTensor() const { return Get<T>(); }
    template <class T> void FreeTensor(const LocalTensor<T>&) const {}
    template <class T> LocalTensor<T> GetWithOffset(uint32_t n, uint32_t bytes) const {
        return LocalTensor<T>(reinterpret_cast<T*>(addr_ + bytes), n);
    }
};

class TPipe {
public:
    uint64_t used_ = 0;
    TPipe() { opsdk_rt::t_pipe = this; }
    ~TPipe() { if (opsdk_rt::t_pipe == this) opsdk_rt::t_pipe = nullptr; }
    uint8_t* take(uint64_t bytes, const char* what, const char* file, int line) {
        if (used_ + bytes > opsdk_rt::g.ub_size)
            opsdk_rt::stop("ub-overflow", file, line,
                           opsdk_rt::fmt("%s needs %llu B more UB with %llu B already given: beyond UB's %llu B",
                                         what, (unsigned long long)bytes, (unsigned long long)used_,
                                         (unsigned long long)opsdk_rt::g.ub_size));
        uint8_t* p = opsdk_rt::t_ub + used_;
        used_ += bytes;
        return p;
    }
    bool InitBuffer(TQueBase& que, uint8_t num, uint32_t len, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        uint32_t aligned = (len + 31) / 32 * 32;
        std::string what = opsdk_rt::fmt("InitBuffer of a queue, %u x %u B,", unsigned(num), unsigned(len));
        uint8_t* p = take(uint64_t(num) * aligned, what.c_str(), file, line);
        que.bufs_.clear();
        que.fifo_.clear();
        for (int i = 0; i < num; ++i) que.bufs_.push_back({p + uint64_t(i) * aligned, aligned, 0});
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        uint32_t aligned = (len + 31) / 32 * 32;
        std::string what = opsdk_rt::fmt("InitBuffer of a TBuf of %u B", unsigned(len));
        buf.addr_ = take(aligned, what.c_str(), file, line);
        buf.len_ = aligned;
        return true;
    }
    void Reset() { used_ = 0; }
    void Destroy() { used_ = 0; }
    void Init() { used_ = 0; }
    template <HardEvent e> TEventID AllocEventID() { return 0; }
    template <HardEvent e> void ReleaseEventID(TEventID) {}
    TEventID FetchEventID(HardEvent) { return 0; }
    template <HardEvent e> TEventID FetchEventID() { return 0; }
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(opsdk_rt::t_pipe); }
// PopStackBuffer: the UB the pipe has not given out (all of it without a pipe), as one
// tensor; false when none is left.
template <class T, TPosition pos>
inline bool PopStackBuffer(LocalTensor<T>& dst) {
    uint64_t used = opsdk_rt::t_pipe ? GetTPipePtr()->used_ : 0;
    dst = LocalTensor<T>(reinterpret_cast<T*>(opsdk_rt::t_ub + used), uint32_t((opsdk_rt::g.ub_size - used) / sizeof(T)));
    return dst.size_ > 0;
}

// ---------------------------------------------------------------- system
inline int64_t GetBlockIdx() { return opsdk_rt::t_block; }
inline int64_t GetBlockNum() { return opsdk_rt::g.block_num; }
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetTaskRation() { return 1; }
inline int64_t GetSubBlockNum() { return 1; }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
    opsdk_rt::Buffer* b = opsdk_rt::owner_of(workspace);
    return b && b->size >= opsdk_rt::g.sys_workspace ? workspace + opsdk_rt::g.sys_workspace : workspace;
}
inline GM_ADDR GetSysWorkSpacePtr() { return nullptr; }
inline void SetSysWorkspace(GM_ADDR) {}
template <HardEvent e> inline void SetFlag(int32_t) {}
template <HardEvent e> inline void WaitFlag(int32_t) {}
inline void SetFlag(HardEvent, int32_t) {}
inline void WaitFlag(HardEvent, int32_t) {}
template <pipe_t p = PIPE_ALL> inline void PipeBarrier() {}
inline void pipe_barrier(pipe_t) {}
template <bool isAIVOnly = true> inline void SyncAll() { opsdk_rt::sync_all(); }
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, int32_t = 0) { opsdk_rt::sync_all(); }
// CrossCoreSetFlag / CrossCoreWaitFlag: mode 0 synchronises every vector core (a barrier a
// core may do work inside); modes 1 and 2 pair vector cores with the cube core, which is
// not modelled.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId) {
    static_assert(modeId == 0, "opsdk's stand-in models CrossCoreSetFlag mode 0 only (all vector cores)");
    opsdk_rt::flag_set(flagId);
}
inline void CrossCoreWaitFlag(uint16_t flagId, OPSDK_WHERE) { opsdk_rt::flag_wait(flagId, file, line); }
template <class T> inline void SetAtomicAdd() { opsdk_rt::t_atomic = 1; }
template <class T> inline void SetAtomicMax() { opsdk_rt::t_atomic = 2; }
template <class T> inline void SetAtomicMin() { opsdk_rt::t_atomic = 3; }
inline void SetAtomicNone() { opsdk_rt::t_atomic = 0; }
template <class T> inline void SetAtomicType() {}
inline void DataCacheCleanAndInvalid(...) {}
inline int64_t GetSystemCycle() { return 0; }
inline constexpr uint32_t GetUbBlockSize() { return 32; }
inline constexpr uint32_t GetDataBlockSizeInBytes() { return 32; }
inline constexpr uint32_t GetVecLen() { return 256; }
inline constexpr uint32_t GetVRegSize() { return 256; }
inline int64_t GetRuntimeUBSize() { return int64_t(opsdk_rt::g.ub_size); }

// ---------------------------------------------------------------- masks
template <class T> constexpr int EPB = 32 / sizeof(T);   // elements per 32 B block
template <class T> constexpr int EPR = 256 / sizeof(T);  // elements per 256 B repeat

inline void continuous_mask(uint64_t n, uint64_t out[2]) {
    out[0] = n >= 64 ? ~0ull : (n ? (1ull << n) - 1 : 0);
    out[1] = n >= 128 ? ~0ull : (n > 64 ? (1ull << (n - 64)) - 1 : 0);
}
template <class T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(uint64_t len) {
    if (opsdk_rt::t_counter) { opsdk_rt::t_mask[0] = len; opsdk_rt::t_mask[1] = 0; }
    else continuous_mask(len, opsdk_rt::t_mask);
}
template <class T, MaskMode mode = MaskMode::NORMAL> inline void SetVectorMask(uint64_t high, uint64_t low) {
    opsdk_rt::t_mask[0] = low;
    opsdk_rt::t_mask[1] = high;
}
inline void ResetMask() { opsdk_rt::t_mask[0] = opsdk_rt::t_mask[1] = ~0ull; }
inline void SetMaskCount() { opsdk_rt::t_counter = true; }
inline void SetMaskNorm() { opsdk_rt::t_counter = false; }

struct AscendCUtils {
    template <class T> static void SetMask(uint64_t len) { SetVectorMask<T>(len); }
    template <class T> static void SetMask(uint64_t high, uint64_t low) { SetVectorMask<T>(high, low); }
    static constexpr int32_t GetC0Count(int32_t bytes) { return 32 / bytes; }
    static constexpr int32_t GetC0Size() { return 32; }
    static void ResetMask() { AscendC::ResetMask(); }
};

// One operand of a level-0 instruction: its base and its block and repeat strides (in
// 32 B blocks); element i of repeat r is at r*rep*epb + (i/epb)*blk*epb + i%epb.
template <class T>
struct Operand {
    T* p;
    uint32_t blk, rep;
    T& at(uint32_t r, uint32_t i) const {
        constexpr uint32_t e = EPB<T>;
        return p[uint64_t(r) * rep * e + uint64_t(i / e) * blk * e + i % e];
    }
};

// Runs f(r, i) over every masked element of `repeat` repeats of `per` elements, the
// mask given (set=true: it becomes the global mask, as the API sets it) or the global one.
template <class F>
inline void level0(const uint64_t* mask, bool set, uint32_t per, uint32_t repeat, F f) {
    if (set) { opsdk_rt::t_mask[0] = mask[0]; opsdk_rt::t_mask[1] = mask[1]; }
    if (opsdk_rt::t_counter) {
        uint64_t total = opsdk_rt::t_mask[0];
        for (uint64_t k = 0; k < total; ++k) f(uint32_t(k / per), uint32_t(k % per));
        return;
    }
    for (uint32_t r = 0; r < repeat; ++r)
        for (uint32_t i = 0; i < per; ++i)
            if (opsdk_rt::t_mask[i / 64] >> (i % 64) & 1) f(r, i);
}
inline const uint64_t* mask_of(uint64_t n, uint64_t out[2]) {
    if (opsdk_rt::t_counter) { out[0] = n; out[1] = 0; }
    else continuous_mask(n, out);
    return out;
}

// ---------------------------------------------------------------- data movement
namespace copy {
template <class T>
inline void gm_to_ub(T* ub, const T* gm, uint64_t bytes, const char* file, int line) {
    if (!opsdk_rt::ub_access(ub, bytes, file, line)) return;
    if (opsdk_rt::gm_access(gm, bytes, false, file, line)) std::memcpy(ub, gm, bytes);
}
template <class T>
inline void ub_to_gm(T* gm, const T* ub, uint64_t bytes, const char* file, int line) {
    if (!opsdk_rt::ub_access(ub, bytes, file, line)) return;
    const T* plain = opsdk_rt::t_atomic ? nullptr : ub;  // a plain write is done by gm_access
    if (!opsdk_rt::gm_access(gm, bytes, true, file, line, plain) || plain) return;
    if (bytes % sizeof(T)) { std::memcpy(gm, ub, bytes); return; }
    for (uint64_t i = 0; i < bytes / sizeof(T); ++i) {
        T a, b;
        std::memcpy(&a, gm + i, sizeof(T));
        std::memcpy(&b, ub + i, sizeof(T));
        opsdk_rt::Calc<T> x = a, y = b;
        T r = opsdk_rt::store<T>(opsdk_rt::t_atomic == 1 ? x + y : opsdk_rt::t_atomic == 2 ? std::max(x, y) : std::min(x, y));
        std::memcpy(gm + i, &r, sizeof(T));
    }
}
}  // namespace copy

template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.addr_);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.addr_);
    for (uint32_t i = 0; i < p.blockCount; ++i)
        copy::gm_to_ub(reinterpret_cast<T*>(d + uint64_t(i) * (p.blockLen + p.dstStride) * 32),
                       reinterpret_cast<const T*>(s + uint64_t(i) * (p.blockLen + p.srcStride) * 32), uint64_t(p.blockLen) * 32, file, line);
}
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.addr_);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.addr_);
    for (uint32_t i = 0; i < p.blockCount; ++i)
        copy::ub_to_gm(reinterpret_cast<T*>(d + uint64_t(i) * (p.blockLen + p.dstStride) * 32),
                       reinterpret_cast<const T*>(s + uint64_t(i) * (p.blockLen + p.srcStride) * 32), uint64_t(p.blockLen) * 32, file, line);
}
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.addr_);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.addr_);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint8_t* to = d + uint64_t(i) * (p.blockLen + p.dstStride) * 32;
        const uint8_t* from = s + uint64_t(i) * (p.blockLen + p.srcStride) * 32;
        bool inside = opsdk_rt::ub_access(to, uint64_t(p.blockLen) * 32, file, line);
        if (opsdk_rt::ub_access(from, uint64_t(p.blockLen) * 32, file, line) && inside)
            std::memmove(to, from, uint64_t(p.blockLen) * 32);
    }
}
// The count form moves whole 32 B blocks: count * sizeof(T) / 32 of them (the rest of an
// unaligned count is not moved, as on the hardware).
template <class T, class D, class S>
inline void copy_count(const D& dst, const S& src, uint32_t count, const char* file, int line) {
    uint64_t blocks = uint64_t(count) * sizeof(T) / 32;
    for (uint64_t done = 0; done < blocks; done += 4095) {  // one instruction moves < 4096 blocks
        uint16_t n = uint16_t(std::min<uint64_t>(4095, blocks - done));
        DataCopy(dst[uint32_t(done * 32 / sizeof(T))], src[uint32_t(done * 32 / sizeof(T))], DataCopyParams(1, n, 0, 0), file, line);
    }
}
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count, OPSDK_WHERE) {
    copy_count<T>(dst, src, count, file, line);
}
template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, OPSDK_WHERE) {
    copy_count<T>(dst, src, count, file, line);
}
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, OPSDK_WHERE) {
    copy_count<T>(dst, src, count, file, line);
}

template <class T, class P>
inline void pad_in(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint16_t count, uint32_t len, uint32_t gap,
                   uint32_t dst_gap, bool is_pad, uint8_t left, uint8_t right, P value, const char* file, int line) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.addr_);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.addr_);
    uint64_t row = (uint64_t(left + right) * sizeof(T) + len + 31) / 32 * 32;
    for (uint32_t i = 0; i < count; ++i) {
        uint8_t* to = d + i * (row + uint64_t(dst_gap) * 32);
        if (is_pad && opsdk_rt::ub_access(to, row, file, line)) {
            T v;
            std::memcpy(&v, &value, sizeof(T));
            for (uint32_t k = 0; k < left; ++k) std::memcpy(to + k * sizeof(T), &v, sizeof(T));
            for (uint64_t k = left * sizeof(T) + len; k + sizeof(T) <= row; k += sizeof(T)) std::memcpy(to + k, &v, sizeof(T));
        }
        copy::gm_to_ub(reinterpret_cast<T*>(to + left * sizeof(T)), reinterpret_cast<const T*>(s + uint64_t(i) * (len + gap)), len, file, line);
    }
}
template <class T, class U = T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<U>& pad = {}, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    // padding params of another element type: their value converted to T
    pad_in(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding,
           T(pad.paddingValue), file, line);
}
template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    pad_in(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding, pad.paddingValue, file, line);
}
template <class T>
inline void pad_out(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint16_t count, uint32_t len, uint32_t src_gap,
                    uint32_t gap, const char* file, int line) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst.addr_);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src.addr_);
    uint64_t row = (uint64_t(len) + 31) / 32 * 32;
    for (uint32_t i = 0; i < count; ++i)
        copy::ub_to_gm(reinterpret_cast<T*>(d + uint64_t(i) * (len + gap)),
                       reinterpret_cast<const T*>(s + i * (row + uint64_t(src_gap) * 32)), len, file, line);
}
template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    pad_out(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, file, line);
}
template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                        const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    pad_out(dst, src, p.blockCount, p.blockLen, p.srcStride, p.dstStride, file, line);
}
// DataCopyPadGm2UBImpl / DataCopyPadUB2GMImpl: DataCopyPad on raw UB and GM addresses
// (kernels reinterpret an int64 tensor as uint32 so).
template <class T, class P, class Pad>
inline void DataCopyPadGm2UBImpl(__ubuf__ T* dst, __gm__ T* src, const P& p, const Pad& pad, OPSDK_WHERE) {
    GlobalTensor<T> from;
    from.SetGlobalBuffer(src);
    pad_in(LocalTensor<T>(dst, 0), from, p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad, pad.leftPadding,
           pad.rightPadding, pad.paddingValue, file, line);
}
template <class T, class P>
inline void DataCopyPadUB2GMImpl(__gm__ T* dst, __ubuf__ T* src, const P& p, OPSDK_WHERE) {
    GlobalTensor<T> to;
    to.SetGlobalBuffer(dst);
    pad_out(to, LocalTensor<T>(src, 0), p.blockCount, p.blockLen, p.srcStride, p.dstStride, file, line);
}
// DataCopyUB2GMImpl: DataCopy (32 B blocks) from a raw UB address to a raw GM address.
template <class T>
inline void DataCopyUB2GMImpl(__gm__ T* dst, __ubuf__ T* src, const DataCopyParams& p, OPSDK_WHERE) {
    GlobalTensor<T> to;
    to.SetGlobalBuffer(dst);
    DataCopy(to, LocalTensor<T>(src, 0), p, file, line);
}

// ---------------------------------------------------------------- vector instructions
// The count form runs over `count` contiguous elements; the level-0 form over `repeat`
// repeats of 256 B under a mask (a count of leading elements, or two 64-bit words; with
// isSetMask=false the one SetVectorMask set). The result is computed in float (int64 for
// integers) and stored rounded to the element type (round-to-nearest-even).
template <class D, class S, class F>
inline void unary_count(const LocalTensor<D>& dst, const LocalTensor<S>& src, int32_t count, F f, const char* file, int line) {
    if (count <= 0) return;
    opsdk_rt::ub_access(dst.addr_, uint64_t(count) * sizeof(D), file, line);
    opsdk_rt::ub_access(src.addr_, uint64_t(count) * sizeof(S), file, line);
    for (int32_t i = 0; i < count; ++i) dst.addr_[i] = f(src.addr_[i]);
}
template <class D, class S, class F>
inline void unary_lv0(const LocalTensor<D>& dst, const LocalTensor<S>& src, const uint64_t* mask, bool set, uint8_t repeat,
                      const UnaryRepeatParams& p, F f) {
    Operand<D> d{dst.addr_, p.dstBlkStride, p.dstRepStride};
    Operand<S> s{src.addr_, p.srcBlkStride, p.srcRepStride};
    level0(mask, set, uint32_t(256 / std::max(sizeof(D), sizeof(S))), repeat, [&](uint32_t r, uint32_t i) { d.at(r, i) = f(s.at(r, i)); });
}
template <class T, class F>
inline void binary_count(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t count, F f, const char* file, int line) {
    if (count <= 0) return;
    for (const T* p : {dst.addr_, a.addr_, b.addr_}) opsdk_rt::ub_access(p, uint64_t(count) * sizeof(T), file, line);
    for (int32_t i = 0; i < count; ++i) dst.addr_[i] = f(a.addr_[i], b.addr_[i]);
}
template <class T, class F>
inline void binary_lv0(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, const uint64_t* mask, bool set,
                       uint8_t repeat, const BinaryRepeatParams& p, F f) {
    Operand<T> d{dst.addr_, p.dstBlkStride, p.dstRepStride}, x{a.addr_, p.src0BlkStride, p.src0RepStride},
        y{b.addr_, p.src1BlkStride, p.src1RepStride};
    level0(mask, set, EPR<T>, repeat, [&](uint32_t r, uint32_t i) { d.at(r, i) = f(x.at(r, i), y.at(r, i)); });
}

#define OPSDK_BINARY(NAME, EXPR)                                                                                   \
    template <class T>                                                                                             \
    inline T opsdk_##NAME(T a0, T b0) {                                                                            \
        opsdk_rt::Calc<T> a = a0, b = b0;                                                                          \
        return opsdk_rt::store<T>(EXPR);                                                                           \
    }                                                                                                              \
    template <class T>                                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, const int32_t& count, \
                     OPSDK_WHERE) {                                                                                \
        binary_count(dst, a, b, count, opsdk_##NAME<T>, file, line);                                               \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask,   \
                     const uint8_t repeat, const BinaryRepeatParams& p, OPSDK_WHERE) {                             \
        uint64_t m[2];                                                                                             \
        binary_lv0(dst, a, b, mask_of(mask, m), isSetMask, repeat, p, opsdk_##NAME<T>);                            \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,                  \
                     const uint64_t mask[], const uint8_t repeat, const BinaryRepeatParams& p, OPSDK_WHERE) {      \
        binary_lv0(dst, a, b, mask, isSetMask, repeat, p, opsdk_##NAME<T>);                                        \
    }                                                                                                              \
    template <class T, class C, OPSDK_EXACT(C, int32_t)>                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, const C& count) { \
        binary_count(dst, a, b, count, opsdk_##NAME<T>, OPSDK_NOWHERE);                                           \
    }                                                                                                              \
    template <class T, bool isSetMask = true, class M, class R, OPSDK_EXACT(M, uint64_t), OPSDK_EXACT(R, uint8_t)> \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, M mask,          \
                     R repeat, const BinaryRepeatParams& p) {                                                      \
        uint64_t m[2];                                                                                             \
        binary_lv0(dst, a, b, mask_of(mask, m), isSetMask, repeat, p, opsdk_##NAME<T>);                            \
    }

OPSDK_BINARY(Add, a + b)
OPSDK_BINARY(Sub, a - b)
OPSDK_BINARY(Mul, a * b)
OPSDK_BINARY(Div, a / b)
OPSDK_BINARY(Max, std::max(a, b))
OPSDK_BINARY(Min, std::min(a, b))
OPSDK_BINARY(AddRelu, std::max<decltype(a)>(a + b, 0))
OPSDK_BINARY(SubRelu, std::max<decltype(a)>(a - b, 0))
OPSDK_BINARY(MulAddDst, a * b)
OPSDK_BINARY(And, opsdk_rt::Calc<T>(int64_t(a) & int64_t(b)))
OPSDK_BINARY(Or, opsdk_rt::Calc<T>(int64_t(a) | int64_t(b)))
OPSDK_BINARY(Xor, opsdk_rt::Calc<T>(int64_t(a) ^ int64_t(b)))

#define OPSDK_UNARY(NAME, EXPR)                                                                                    \
    template <class T>                                                                                             \
    inline T opsdk_##NAME(T a0) {                                                                                  \
        opsdk_rt::Calc<T> a = a0;                                                                                  \
        return opsdk_rt::store<T>(EXPR);                                                                           \
    }                                                                                                              \
    template <class T>                                                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, OPSDK_WHERE) {    \
        unary_count(dst, src, count, opsdk_##NAME<T>, file, line);                                                 \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeat,    \
                     const UnaryRepeatParams& p, OPSDK_WHERE) {                                                    \
        uint64_t m[2];                                                                                             \
        unary_lv0(dst, src, mask_of(mask, m), isSetMask, repeat, p, opsdk_##NAME<T>);                              \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                  \
                     const uint8_t repeat, const UnaryRepeatParams& p, OPSDK_WHERE) {                              \
        unary_lv0(dst, src, mask, isSetMask, repeat, p, opsdk_##NAME<T>);                                          \
    }                                                                                                              \
    template <class T, class C, OPSDK_EXACT(C, int32_t)>                                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const C& count) {                       \
        unary_count(dst, src, count, opsdk_##NAME<T>, OPSDK_NOWHERE);                                              \
    }                                                                                                              \
    template <class T, bool isSetMask = true, class M, class R, OPSDK_EXACT(M, uint64_t), OPSDK_EXACT(R, uint8_t)> \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, M mask, R repeat,                       \
                     const UnaryRepeatParams& p) {                                                                 \
        uint64_t m[2];                                                                                             \
        unary_lv0(dst, src, mask_of(mask, m), isSetMask, repeat, p, opsdk_##NAME<T>);                              \
    }

OPSDK_UNARY(Exp, std::exp(a))
OPSDK_UNARY(Ln, std::log(a))
OPSDK_UNARY(Sqrt, std::sqrt(a))
OPSDK_UNARY(Abs, a < 0 ? -a : a)
OPSDK_UNARY(Relu, a > 0 ? a : 0)
OPSDK_UNARY(Reciprocal, 1 / a)
OPSDK_UNARY(Rsqrt, 1 / std::sqrt(a))
OPSDK_UNARY(Not, opsdk_rt::Calc<T>(~int64_t(a)))

#define OPSDK_SCALAR(NAME, EXPR)                                                                                   \
    template <class T, class U>                                                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& s0, const int32_t& count,      \
                     OPSDK_WHERE) {                                                                                \
        opsdk_rt::Calc<T> b = T(s0);                                                                               \
        unary_count(dst, src, count, [b](T a0) { opsdk_rt::Calc<T> a = a0; return opsdk_rt::store<T>(EXPR); }, file, line); \
    }                                                                                                              \
    template <class T, bool isSetMask = true, class U>                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& s0, uint64_t mask,             \
                     const uint8_t repeat, const UnaryRepeatParams& p, OPSDK_WHERE) {                              \
        opsdk_rt::Calc<T> b = T(s0);                                                                               \
        uint64_t m[2];                                                                                             \
        unary_lv0(dst, src, mask_of(mask, m), isSetMask, repeat, p,                                                \
                  [b](T a0) { opsdk_rt::Calc<T> a = a0; return opsdk_rt::store<T>(EXPR); });                       \
    }                                                                                                              \
    template <class T, bool isSetMask = true, class U>                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& s0, const uint64_t mask[],     \
                     const uint8_t repeat, const UnaryRepeatParams& p, OPSDK_WHERE) {                              \
        opsdk_rt::Calc<T> b = T(s0);                                                                               \
        unary_lv0(dst, src, mask, isSetMask, repeat, p,                                                            \
                  [b](T a0) { opsdk_rt::Calc<T> a = a0; return opsdk_rt::store<T>(EXPR); });                       \
    }                                                                                                              \
    template <class T, class U, class C, OPSDK_EXACT(C, int32_t)>                                                  \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const U& s0, const C& count) {          \
        NAME(dst, src, s0, int32_t(count), OPSDK_NOWHERE);                                                         \
    }

OPSDK_SCALAR(Adds, a + b)
OPSDK_SCALAR(Muls, a * b)
OPSDK_SCALAR(Maxs, std::max(a, b))
OPSDK_SCALAR(Mins, std::min(a, b))
OPSDK_SCALAR(LeakyRelu, a >= 0 ? a : a * b)
OPSDK_SCALAR(ShiftLeft, opsdk_rt::Calc<T>(int64_t(a) << int64_t(b)))
OPSDK_SCALAR(ShiftRight, opsdk_rt::Calc<T>(int64_t(a) >> int64_t(b)))

template <class T, class U>
inline void Duplicate(const LocalTensor<T>& dst, const U& v, const int32_t& count, OPSDK_WHERE) {
    T t = T(v);
    unary_count(dst, dst, count, [t](T) { return t; }, file, line);
}
template <class T, bool isSetMask = true, class U>
inline void Duplicate(const LocalTensor<T>& dst, const U& v, uint64_t mask, const uint8_t repeat, uint16_t dstBlk,
                      uint8_t dstRep, OPSDK_WHERE) {
    T t = T(v);
    uint64_t m[2];
    unary_lv0(dst, dst, mask_of(mask, m), isSetMask, repeat, UnaryRepeatParams(dstBlk, dstBlk, dstRep, dstRep), [t](T) { return t; });
}
template <class T, bool isSetMask = true, class U>
inline void Duplicate(const LocalTensor<T>& dst, const U& v, const uint64_t mask[], const uint8_t repeat, uint16_t dstBlk,
                      uint8_t dstRep, OPSDK_WHERE) {
    T t = T(v);
    unary_lv0(dst, dst, mask, isSetMask, repeat, UnaryRepeatParams(dstBlk, dstBlk, dstRep, dstRep), [t](T) { return t; });
}

inline thread_local float deq_scale = 1.0f;
inline void SetDeqScale(half scale) { deq_scale = float(scale); }
inline void SetDeqScale(float scale, int16_t = 0, bool = false) { deq_scale = scale; }

// Cast: a value converted to the destination type, rounded as `mode` says (CAST_NONE:
// round-to-nearest-even where it must round; integer results saturate).
template <class D, class S>
inline D cast_one(S s, RoundMode mode) {
    double v = double(opsdk_rt::Calc<S>(s));
    if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, half>) v *= deq_scale;  // SetDeqScale's
    opsdk_rt::Rounding r = mode == RoundMode::CAST_FLOOR ? opsdk_rt::FLOOR
                           : mode == RoundMode::CAST_CEIL ? opsdk_rt::CEIL
                           : mode == RoundMode::CAST_TRUNC ? opsdk_rt::TRUNC
                           : mode == RoundMode::CAST_ROUND ? opsdk_rt::AWAY
                           : mode == RoundMode::CAST_ODD ? opsdk_rt::ODD : opsdk_rt::RNE;
    if constexpr (std::is_integral_v<D>) {
        if (std::isnan(v)) return D(0);
        double i = r == opsdk_rt::FLOOR ? std::floor(v) : r == opsdk_rt::CEIL ? std::ceil(v)
                 : r == opsdk_rt::TRUNC ? std::trunc(v) : r == opsdk_rt::AWAY ? std::round(v) : std::nearbyint(v);
        i = std::min<double>(std::max<double>(i, double(std::numeric_limits<D>::min())), double(std::numeric_limits<D>::max()));
        return D(i);
    } else if constexpr (std::is_same_v<D, float>) {
        return float(opsdk_rt::decode(opsdk_rt::encode(v, 8, 23, r), 8, 23));
    } else if constexpr (std::is_same_v<D, double>) {
        return v;
    } else {
        return D::rounded(v, r);
    }
}
// ScalarCast: one value converted as Cast converts each element.
template <class S, class D, RoundMode mode>
inline D ScalarCast(S value) { return cast_one<D, S>(value, mode); }
template <class D, class S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint32_t count, OPSDK_WHERE) {
    unary_count(dst, src, int32_t(count), [mode](S s) { return cast_one<D, S>(s, mode); }, file, line);
}
template <class D, class S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, uint64_t mask, const uint8_t repeat,
                 const UnaryRepeatParams& p, OPSDK_WHERE) {
    uint64_t m[2];
    unary_lv0(dst, src, mask_of(mask, m), isSetMask, repeat, p, [mode](S s) { return cast_one<D, S>(s, mode); });
}
template <class D, class S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint64_t mask[],
                 const uint8_t repeat, const UnaryRepeatParams& p, OPSDK_WHERE) {
    unary_lv0(dst, src, mask, isSetMask, repeat, p, [mode](S s) { return cast_one<D, S>(s, mode); });
}

// ---------------------------------------------------------------- reductions
inline thread_local uint64_t acc_val = 0;
template <class T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>&, const int32_t count, OPSDK_WHERE) {
    opsdk_rt::ub_access(src.addr_, uint64_t(count) * sizeof(T), file, line);
    opsdk_rt::Calc<T> s = 0;
    for (int32_t i = 0; i < count; ++i) s += opsdk_rt::Calc<T>(src.addr_[i]);
    dst.addr_[0] = opsdk_rt::store<T>(s);
    T stored = dst.addr_[0];
    acc_val = 0;
    std::memcpy(&acc_val, &stored, sizeof(T));
}
// Sum (advanced API): each of `outter` rows of `inner` elements (n of them real, the row
// padded to 32 B) summed into dst[row]; the temp buffer's arithmetic is not modelled.
struct SumParams {
    uint32_t outter = 1, inner = 0, n = 0;
};
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SumParams& p, OPSDK_WHERE) {
    opsdk_rt::ub_access(src.addr_, uint64_t(p.outter) * p.inner * sizeof(T), file, line);
    opsdk_rt::ub_access(dst.addr_, (uint64_t(p.outter) * sizeof(T) + 31) / 32 * 32, file, line);
    for (uint32_t r = 0; r < p.outter; ++r) {
        opsdk_rt::Calc<T> sum = 0;
        for (uint32_t i = 0; i < p.n; ++i) sum += opsdk_rt::Calc<T>(src.addr_[uint64_t(r) * p.inner + i]);
        dst.addr_[r] = opsdk_rt::store<T>(sum);
    }
}
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>&, const SumParams& p,
                OPSDK_WHERE) {
    Sum(dst, src, p, file, line);
}
// GetAccVal: the last ReduceSum's result, its bits in the low bytes.
inline uint64_t GetAccVal() { return acc_val; }
template <class T>
inline T GetAccVal() {
    T v;
    std::memcpy(&v, &acc_val, sizeof(T));
    return v;
}
template <class T, bool best>
inline void reduce_best(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count, bool index, const char* file, int line) {
    opsdk_rt::ub_access(src.addr_, uint64_t(count) * sizeof(T), file, line);
    int32_t k = 0;
    for (int32_t i = 1; i < count; ++i) {
        opsdk_rt::Calc<T> a = src.addr_[i], b = src.addr_[k];
        if (best ? a > b : a < b) k = i;
    }
    dst.addr_[0] = src.addr_[k];
    if (index) {
        if constexpr (sizeof(T) == 4) { uint32_t u = uint32_t(k); std::memcpy(&dst.addr_[1], &u, 4); }
        else { uint16_t u = uint16_t(k); std::memcpy(&dst.addr_[1], &u, 2); }
    }
}
template <class T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>&, const int32_t count,
                      bool calIndex = false, OPSDK_WHERE) {
    reduce_best<T, true>(dst, src, count, calIndex, file, line);
}
template <class T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>&, const int32_t count,
                      bool calIndex = false, OPSDK_WHERE) {
    reduce_best<T, false>(dst, src, count, calIndex, file, line);
}
// WholeReduceSum: each repeat's masked elements summed into dst[r * dstRepStride].
template <class T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const int32_t repeat,
                           const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPSDK_WHERE) {
    uint64_t m[2];
    Operand<T> s{src.addr_, uint32_t(srcBlkStride), uint32_t(srcRepStride)};
    std::vector<opsdk_rt::Calc<T>> sums(repeat, 0);
    level0(mask_of(mask, m), isSetMask, EPR<T>, repeat, [&](uint32_t r, uint32_t i) { sums[r] += opsdk_rt::Calc<T>(s.at(r, i)); });
    for (int32_t r = 0; r < repeat; ++r) dst.addr_[r * dstRepStride] = opsdk_rt::store<T>(sums[r]);
}
template <class T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const int32_t repeat,
                           const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, OPSDK_WHERE) {
    Operand<T> s{src.addr_, uint32_t(srcBlkStride), uint32_t(srcRepStride)};
    std::vector<opsdk_rt::Calc<T>> sums(repeat, 0);
    level0(mask, isSetMask, EPR<T>, repeat, [&](uint32_t r, uint32_t i) { sums[r] += opsdk_rt::Calc<T>(s.at(r, i)); });
    for (int32_t r = 0; r < repeat; ++r) dst.addr_[r * dstRepStride] = opsdk_rt::store<T>(sums[r]);
}
// BlockReduceSum / Max / Min: each 32 B block's masked elements reduced; a repeat's 8
// results are contiguous at dst + r * dstRepStride * (elements per block).
template <class T, class F>
inline void block_reduce(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t repeat, const uint64_t* mask, bool set,
                         int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, F f) {
    Operand<T> s{src.addr_, uint32_t(srcBlkStride), uint32_t(srcRepStride)};
    std::vector<opsdk_rt::Calc<T>> acc(uint64_t(repeat) * 8);
    std::vector<bool> seen(acc.size(), false);
    level0(mask, set, EPR<T>, repeat, [&](uint32_t r, uint32_t i) {
        uint32_t k = r * 8 + i / EPB<T>;
        opsdk_rt::Calc<T> v = s.at(r, i);
        acc[k] = seen[k] ? f(acc[k], v) : v;
        seen[k] = true;
    });
    for (int32_t r = 0; r < repeat; ++r)
        for (int b = 0; b < 8; ++b)
            if (seen[r * 8 + b]) dst.addr_[uint64_t(r) * dstRepStride * EPB<T> + b] = opsdk_rt::store<T>(acc[r * 8 + b]);
}
#define OPSDK_BLOCK_REDUCE(NAME, EXPR)                                                                             \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeat, uint64_t mask,    \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride) {         \
        uint64_t m[2];                                                                                             \
        block_reduce(dst, src, repeat, mask_of(mask, m), isSetMask, dstRepStride, srcBlkStride, srcRepStride,      \
                     [](auto a, auto b) { return EXPR; });                                                         \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeat,                   \
                     const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                \
                     const int32_t srcRepStride) {                                                                 \
        block_reduce(dst, src, repeat, mask, isSetMask, dstRepStride, srcBlkStride, srcRepStride,                  \
                     [](auto a, auto b) { return EXPR; });                                                         \
    }
OPSDK_BLOCK_REDUCE(BlockReduceSum, a + b)
OPSDK_BLOCK_REDUCE(BlockReduceMax, std::max(a, b))
OPSDK_BLOCK_REDUCE(BlockReduceMin, std::min(a, b))

// ---------------------------------------------------------------- compare / select
// Compare writes one bit per element (uint8 dst, element i at bit i % 8 of byte i / 8).
template <class T>
inline bool compare_one(CMPMODE mode, T a, T b) {
    opsdk_rt::Calc<T> x = a, y = b;
    return mode == CMPMODE::LT ? x < y : mode == CMPMODE::GT ? x > y : mode == CMPMODE::EQ ? x == y
         : mode == CMPMODE::LE ? x <= y : mode == CMPMODE::GE ? x >= y : x != y;
}
template <class T, class U, class B>
inline void compare_bits(const LocalTensor<U>& dst, const LocalTensor<T>& a, CMPMODE mode, uint32_t count, B b, const char* file, int line) {
    opsdk_rt::ub_access(a.addr_, uint64_t(count) * sizeof(T), file, line);
    uint8_t* bits = reinterpret_cast<uint8_t*>(dst.addr_);
    std::memset(bits, 0, (count + 7) / 8);
    for (uint32_t i = 0; i < count; ++i) bits[i / 8] |= uint8_t(compare_one(mode, a.addr_[i], b(i))) << (i % 8);
}
template <class T, class U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode, uint32_t count, OPSDK_WHERE) {
    opsdk_rt::ub_access(b.addr_, uint64_t(count) * sizeof(T), file, line);
    compare_bits(dst, a, mode, count, [&](uint32_t i) { return b.addr_[i]; }, file, line);
}
template <class T, class U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& a, const T b, CMPMODE mode, uint32_t count, OPSDK_WHERE) {
    compare_bits(dst, a, mode, count, [&](uint32_t) { return b; }, file, line);
}
// The operator forms: `dst = a < b` compares every element of a (a whole tensor).
template <class T>
struct WholeCompare {
    LocalTensor<T> a, b;
    CMPMODE mode;
};
#define OPSDK_COMPARE_OPERATOR(OP, MODE) \
    template <class T>                   \
    WholeCompare<T> operator OP(const LocalTensor<T>& a, const LocalTensor<T>& b) { return {a, b, CMPMODE::MODE}; }
OPSDK_COMPARE_OPERATOR(<, LT)
OPSDK_COMPARE_OPERATOR(>, GT)
OPSDK_COMPARE_OPERATOR(<=, LE)
OPSDK_COMPARE_OPERATOR(>=, GE)
OPSDK_COMPARE_OPERATOR(==, EQ)
OPSDK_COMPARE_OPERATOR(!=, NE)
// Compares: CompareScalar's newer name.
template <class T, class U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& a, const T b, CMPMODE mode, uint32_t count, OPSDK_WHERE) {
    CompareScalar(dst, a, b, mode, count, file, line);
}
// The level-0 form: each repeat compares its masked elements (strided as the params say)
// into the next EPR<T> bits of dst; bits of elements the mask leaves out keep their value.
// Without dst (one repeat) the bits go to the compare-mask register GetCmpMask reads.
inline thread_local uint8_t t_cmpmask[16] = {};
template <class T>
inline void compare_lv0(uint8_t* bits, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode, const uint64_t* mask,
                        bool set, uint8_t repeat, const BinaryRepeatParams& p) {
    Operand<T> x{a.addr_, p.src0BlkStride, p.src0RepStride}, y{b.addr_, p.src1BlkStride, p.src1RepStride};
    level0(mask, set, EPR<T>, repeat, [&](uint32_t r, uint32_t i) {
        uint64_t k = uint64_t(r) * EPR<T> + i;
        uint8_t bit = uint8_t(1u << (k % 8));
        bits[k / 8] = compare_one(mode, x.at(r, i), y.at(r, i)) ? bits[k / 8] | bit : bits[k / 8] & ~bit;
    });
}
#define OPSDK_COMPARE_LV0(MASK_PARAM, MASK_ARG)                                                                    \
    template <class T, class U, bool isSetMask = true>                                                             \
    inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode, \
                        MASK_PARAM, uint8_t repeat, const BinaryRepeatParams& p, OPSDK_WHERE) {                    \
        uint64_t m[2];                                                                                             \
        opsdk_rt::ub_access(dst.addr_, (uint64_t(repeat) * EPR<T> + 7) / 8, file, line);                          \
        compare_lv0(reinterpret_cast<uint8_t*>(dst.addr_), a, b, mode, MASK_ARG, isSetMask, repeat, p);           \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void Compare(const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode, MASK_PARAM,               \
                        const BinaryRepeatParams& p, OPSDK_WHERE) {                                                \
        uint64_t m[2];                                                                                             \
        compare_lv0(t_cmpmask, a, b, mode, MASK_ARG, isSetMask, 1, p);                                             \
    }
OPSDK_COMPARE_LV0(uint64_t mask, mask_of(mask, m))
OPSDK_COMPARE_LV0(const uint64_t mask[], ((void)m, mask))
// GetCmpMask / SetCmpMask: the compare-mask register (128 bits) to and from UB.
template <class T>
inline void GetCmpMask(const LocalTensor<T>& dst, OPSDK_WHERE) {
    opsdk_rt::ub_access(dst.addr_, sizeof t_cmpmask, file, line);
    std::memcpy(dst.addr_, t_cmpmask, sizeof t_cmpmask);
}
template <class T>
inline void SetCmpMask(const LocalTensor<T>& src, OPSDK_WHERE) {
    opsdk_rt::ub_access(src.addr_, sizeof t_cmpmask, file, line);
    std::memcpy(t_cmpmask, src.addr_, sizeof t_cmpmask);
}
// Select: dst[i] = src0[i] where selMask's bit is 1, else src1[i] (a tensor, modes 0 and
// 2) or the scalar src1 (mode 1). A repeat of the level-0 form takes the next repeat's
// worth of selMask bits (modes 1 and 2), or the first repeat's again (mode 0,
// VSEL_CMPMASK_SPR: the count form repeats them every 256 B too); elements the mask
// leaves out keep dst's value.
template <class T>
inline uint64_t select_bit(SELMODE mode, uint64_t r, uint64_t i) { return mode == SELMODE::VSEL_CMPMASK_SPR ? i : r * EPR<T> + i; }
template <class T, class U, class B>
inline void select_count(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a, B b, SELMODE mode,
                         uint32_t count) {
    const uint8_t* bits = reinterpret_cast<const uint8_t*>(sel.addr_);
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t k = select_bit<T>(mode, i / EPR<T>, i % EPR<T>);
        dst.addr_[i] = (bits[k / 8] >> (k % 8) & 1) ? a.addr_[i] : b(0u, i);
    }
}
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a, const LocalTensor<T>& b,
                   SELMODE mode, uint32_t count, OPSDK_WHERE) {
    select_count(dst, sel, a, [&](uint32_t, uint32_t i) { return b.addr_[i]; }, mode, count);
}
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a, T b, SELMODE mode, uint32_t count,
                   OPSDK_WHERE) {
    select_count(dst, sel, a, [b](uint32_t, uint32_t) { return b; }, mode, count);
}
template <class T, class U, class B>
inline void select_lv0(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a, B b, SELMODE mode,
                       const uint64_t* mask, bool set, uint8_t repeat, const BinaryRepeatParams& p) {
    Operand<T> d{dst.addr_, p.dstBlkStride, p.dstRepStride}, x{a.addr_, p.src0BlkStride, p.src0RepStride};
    const uint8_t* bits = reinterpret_cast<const uint8_t*>(sel.addr_);
    level0(mask, set, EPR<T>, repeat, [&](uint32_t r, uint32_t i) {
        uint64_t k = select_bit<T>(mode, r, i);
        d.at(r, i) = (bits[k / 8] >> (k % 8) & 1) ? x.at(r, i) : b(r, i);
    });
}
#define OPSDK_SELECT_LV0(MASK_PARAM, MASK_ARG)                                                                     \
    template <class T, class U, bool isSetMask = true>                                                             \
    inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a,              \
                       const LocalTensor<T>& b, SELMODE mode, MASK_PARAM, uint8_t repeat,                          \
                       const BinaryRepeatParams& p, OPSDK_WHERE) {                                                 \
        uint64_t m[2];                                                                                             \
        Operand<T> y{b.addr_, p.src1BlkStride, p.src1RepStride};                                                   \
        select_lv0(dst, sel, a, [&](uint32_t r, uint32_t i) { return y.at(r, i); }, mode, MASK_ARG, isSetMask,     \
                   repeat, p);                                                                                     \
    }                                                                                                              \
    template <class T, class U, bool isSetMask = true>                                                             \
    inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& sel, const LocalTensor<T>& a, T b,         \
                       SELMODE mode, MASK_PARAM, uint8_t repeat, const BinaryRepeatParams& p, OPSDK_WHERE) {       \
        uint64_t m[2];                                                                                             \
        select_lv0(dst, sel, a, [b](uint32_t, uint32_t) { return b; }, mode, MASK_ARG, isSetMask, repeat, p);      \
    }
OPSDK_SELECT_LV0(uint64_t mask, mask_of(mask, m))
OPSDK_SELECT_LV0(const uint64_t mask[], ((void)m, mask))

// ---------------------------------------------------------------- sorting (910B layout)
// Sorted data are (score, index) pairs of 8 bytes: the score in the low bytes (a half
// score's 2 bytes, then 2 reserved, written 0), the uint32 index in the high 4. Scores
// sort descending; equal scores keep their input order (the docs'). NaN scores: the docs
// do not say where they go; here they sort after every number.
template <class T>
inline void write_pair(T* dst, uint64_t k, T score, uint32_t index) {
    uint8_t* at = reinterpret_cast<uint8_t*>(dst) + k * 8;
    std::memset(at, 0, 4);
    std::memcpy(at, &score, sizeof(T));
    std::memcpy(at + 4, &index, 4);
}
template <class T>
inline void sort_pairs(T* dst, const T* score, const uint32_t* index, uint64_t count, uint64_t group) {
    std::vector<uint64_t> order(count);
    for (uint64_t at = 0; at < count; at += group) {
        uint64_t end = std::min(count, at + group);
        for (uint64_t i = at; i < end; ++i) order[i] = i;
        std::stable_sort(order.begin() + at, order.begin() + end, [&](uint64_t a, uint64_t b) {
            float x = float(score[a]), y = float(score[b]);
            return std::isnan(y) ? !std::isnan(x) : x > y;
        });
    }
    std::vector<T> scores(score, score + count);
    std::vector<uint32_t> indices(index, index + count);
    for (uint64_t k = 0; k < count; ++k) write_pair(dst, k, scores[order[k]], indices[order[k]]);
}
// Sort32: each repeat's 32 scores (src0) with their indices (src1) sorted into 32 pairs.
template <class T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1, const int32_t repeatTimes,
                   OPSDK_WHERE) {
    uint64_t n = uint64_t(std::max(repeatTimes, 0)) * 32;
    bool inside = opsdk_rt::ub_access(src0.addr_, n * sizeof(T), file, line);
    inside &= opsdk_rt::ub_access(src1.addr_, n * 4, file, line);
    if (!(opsdk_rt::ub_access(dst.addr_, n * 8, file, line) && inside)) return;
    sort_pairs(dst.addr_, src0.addr_, src1.addr_, n, 32);
}
// Sort: repeatTimes * 32 scores (concat) with their indices sorted into pairs, all of them
// (isFullSort) or each 32 apart.
template <class T, bool isFullSort>
inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index, LocalTensor<T>& tmp,
                 const int32_t repeatTimes, OPSDK_WHERE) {
    uint64_t n = uint64_t(std::max(repeatTimes, 0)) * 32;
    bool inside = opsdk_rt::ub_access(concat.addr_, n * sizeof(T), file, line);
    inside &= opsdk_rt::ub_access(index.addr_, n * 4, file, line);
    if (!(opsdk_rt::ub_access(dst.addr_, n * 8, file, line) && inside)) return;
    sort_pairs(dst.addr_, concat.addr_, index.addr_, n, isFullSort ? std::max<uint64_t>(n, 1) : 32);
}
// GetSortLen / GetSortOffset: the T elements that `count` sorted pairs take (8 B each).
template <class T>
inline constexpr uint32_t GetSortLen(const uint32_t count) { return count * 8 / sizeof(T); }
template <class T>
inline constexpr uint32_t GetSortOffset(const uint32_t count) { return count * 8 / sizeof(T); }
// Concat: the scores Sort takes, ready (on 910B a copy: 16 elements a repeat). These
// move nothing where an operand reaches beyond the UB (a finding at the line).
template <class T>
inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp, const int32_t repeatTimes,
                   OPSDK_WHERE) {
    // From the 910B on (__CCE_AICORE__ >= 220) Sort takes the scores as they are: Concat
    // makes ``concat`` the scores themselves (kernels pass a tensor never allocated).
    (void)tmp;
    opsdk_rt::ub_access(src.addr_, uint64_t(std::max(repeatTimes, 0)) * 16 * sizeof(T), file, line);
    concat = src;
}
// MrgSort: up to four sorted lists of pairs (validBit: which of src1..src4) merged into
// dst, descending (ties: the lower list first, as the docs order them); with
// ifExhaustedSuspension it stops when a list runs out. Each repeat moves every list and
// dst on by the four lists' total length.
template <class T>
struct MrgSortSrcList {
    MrgSortSrcList() = default;
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c, const LocalTensor<T>& d)
        : src1(a), src2(b), src3(c), src4(d) {}
    LocalTensor<T> src1, src2, src3, src4;
};
struct MrgSort4Info {
    MrgSort4Info() = default;
    MrgSort4Info(const uint16_t lengths[4], bool suspend, uint16_t valid, uint16_t repeat)
        : ifExhaustedSuspension(suspend), validBit(valid), repeatTimes(repeat) {
        for (int k = 0; k < 4; ++k) elementLengths[k] = lengths[k];
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};
inline thread_local uint16_t t_mrgsort_done[4] = {};
template <class T>
inline void merge_lists(T* dst, T* const src[4], const uint16_t lengths[4], uint16_t valid, bool suspend, uint16_t repeat,
                        const char* file, int line) {
    uint64_t total = 0;
    for (int k = 0; k < 4; ++k) total += (valid >> k & 1) ? lengths[k] : 0;
    for (uint16_t r = 0; r < std::max<uint16_t>(repeat, 1); ++r) {
        std::vector<uint8_t> out;
        uint64_t at[4] = {0, 0, 0, 0};
        const uint8_t* from[4];
        bool inside = true;
        for (int k = 0; k < 4; ++k) {
            from[k] = reinterpret_cast<const uint8_t*>(src[k]) + uint64_t(r) * total * 8;
            if (valid >> k & 1) inside &= opsdk_rt::ub_access(from[k], uint64_t(lengths[k]) * 8, file, line);
        }
        if (!inside) return;
        for (;;) {
            int best = -1;
            float top = 0;
            bool exhausted = false;
            for (int k = 0; k < 4; ++k) {
                if (!(valid >> k & 1)) continue;
                if (at[k] == lengths[k]) { exhausted = true; continue; }
                T score;
                std::memcpy(&score, from[k] + at[k] * 8, sizeof(T));
                float v = float(score);  // NaN after every number, as Sort orders it
                if (best < 0 || (std::isnan(top) ? !std::isnan(v) : v > top)) best = k, top = v;
            }
            if (best < 0 || (suspend && exhausted)) break;
            out.insert(out.end(), from[best] + at[best] * 8, from[best] + at[best] * 8 + 8);
            ++at[best];
        }
        uint8_t* to = reinterpret_cast<uint8_t*>(dst) + uint64_t(r) * total * 8;
        if (opsdk_rt::ub_access(to, out.size(), file, line)) std::memcpy(to, out.data(), out.size());
        for (int k = 0; k < 4; ++k) t_mrgsort_done[k] = uint16_t(at[k]);
    }
}
template <class T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& list, const MrgSort4Info& p, OPSDK_WHERE) {
    T* const src[4] = {list.src1.addr_, list.src2.addr_, list.src3.addr_, list.src4.addr_};
    merge_lists(dst.addr_, src, p.elementLengths, p.validBit, p.ifExhaustedSuspension, p.repeatTimes, file, line);
}
// The advanced API's form: the counts in an array, how many of each list went out after.
template <class T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& list, const uint16_t elementCountList[4],
                    uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTimes, OPSDK_WHERE) {
    T* const src[4] = {list.src1.addr_, list.src2.addr_, list.src3.addr_, list.src4.addr_};
    merge_lists(dst.addr_, src, elementCountList, validBit, isExhaustedSuspension, uint16_t(repeatTimes), file, line);
    for (int k = 0; k < 4; ++k) sortedNum[k] = t_mrgsort_done[k];
}
// GetMrgSortResult: how many pairs of each list the last MrgSort took.
inline void GetMrgSortResult(uint16_t& a, uint16_t& b, uint16_t& c, uint16_t& d) {
    a = t_mrgsort_done[0], b = t_mrgsort_done[1], c = t_mrgsort_done[2], d = t_mrgsort_done[3];
}
// Extract: each repeat's 32 sorted pairs split into their scores and their indices.
template <class T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTimes, OPSDK_WHERE) {
    uint64_t n = uint64_t(std::max(repeatTimes, 0)) * 32;
    opsdk_rt::ub_access(sorted.addr_, n * 8, file, line);
    opsdk_rt::ub_access(dstValue.addr_, n * sizeof(T), file, line);
    opsdk_rt::ub_access(dstIndex.addr_, n * 4, file, line);
    const uint8_t* pairs = reinterpret_cast<const uint8_t*>(sorted.addr_);
    std::vector<uint8_t> copy(pairs, pairs + n * 8);  // dst may be sorted's own buffer
    for (uint64_t k = 0; k < n; ++k) {
        std::memcpy(&dstValue.addr_[k], copy.data() + k * 8, sizeof(T));
        std::memcpy(&dstIndex.addr_[k], copy.data() + k * 8 + 4, 4);
    }
}

// ---------------------------------------------------------------- transposition
// TransDataTo5HD: per repeat, 16 source 32 B blocks (one address each) turned into 16
// destination blocks: element j of every source block, in source order, makes block j
// (16-bit types); for 32-bit types blocks 2j and 2j + 1 (sources 0-7, then 8-15); for
// 8-bit types half of block j (the high 16 bytes if dstHighHalf), from byte j of each
// source's high half if srcHighHalf. Each repeat moves every address by its RepStride
// blocks of 32 B.
struct TransDataTo5HDParams {
    bool dstHighHalf = false, srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0, srcRepStride = 0;
    TransDataTo5HDParams() = default;
    TransDataTo5HDParams(bool d, bool s, uint8_t r, uint16_t dr, uint16_t sr)
        : dstHighHalf(d), srcHighHalf(s), repeatTimes(r), dstRepStride(dr), srcRepStride(sr) {}
};
constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;
template <class T>
inline void trans_5hd(uint8_t* const dst[16], const uint8_t* const src[16], const TransDataTo5HDParams& p, const char* file,
                      int line) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "TransDataTo5HD takes 8-, 16- or 32-bit elements");
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        uint8_t in[16][32];
        for (int i = 0; i < 16; ++i) {
            const uint8_t* from = src[i] + uint64_t(r) * p.srcRepStride * 32;
            opsdk_rt::ub_access(from, 32, file, line);
            std::memcpy(in[i], from, 32);
        }
        uint8_t* to[16];
        for (int k = 0; k < 16; ++k) {
            to[k] = dst[k] + uint64_t(r) * p.dstRepStride * 32;
            opsdk_rt::ub_access(to[k] + (sizeof(T) == 1 && p.dstHighHalf ? 16 : 0), sizeof(T) == 1 ? 16 : 32, file, line);
        }
        for (int i = 0; i < 16; ++i) {
            if constexpr (sizeof(T) == 1) {
                for (int j = 0; j < 16; ++j) to[j][(p.dstHighHalf ? 16 : 0) + i] = in[i][(p.srcHighHalf ? 16 : 0) + j];
            } else {
                constexpr int per = 32 / sizeof(T);  // elements a block
                for (int j = 0; j < per; ++j) {
                    int block = sizeof(T) == 2 ? j : 2 * j + i / 8, at = sizeof(T) == 2 ? i : i % 8;
                    std::memcpy(to[block] + at * sizeof(T), in[i] + j * sizeof(T), sizeof(T));
                }
            }
        }
    }
}
inline uint8_t* ub_bytes(uint64_t address) { return reinterpret_cast<uint8_t*>(address); }  // from GetPhyAddr
template <class T>
inline uint8_t* ub_bytes(T* address) { return reinterpret_cast<uint8_t*>(address); }
template <class T>
inline uint8_t* ub_bytes(const LocalTensor<T>& t) { return reinterpret_cast<uint8_t*>(t.addr_); }
template <class T, class L>
inline void trans_5hd_lists(const L& dstList, const L& srcList, const TransDataTo5HDParams& p, const char* file, int line) {
    uint8_t* dst[16];
    const uint8_t* src[16];
    for (int i = 0; i < 16; ++i) {
        dst[i] = ub_bytes(dstList[i]);
        src[i] = ub_bytes(srcList[i]);
    }
    trans_5hd<T>(dst, src, p, file, line);
}
template <class T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams& p, OPSDK_WHERE) {
    trans_5hd_lists<T>(dstList, srcList, p, file, line);
}
template <class T>
inline void TransDataTo5HD(const uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], const uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& p, OPSDK_WHERE) {
    trans_5hd_lists<T>(dstList, srcList, p, file, line);
}
// TransDataTo5HDImpl: the same from lists of UB pointers (kernels call it directly).
template <class T>
inline void TransDataTo5HDImpl(T* const dstList[NCHW_CONV_ADDR_LIST_SIZE], T* const srcList[NCHW_CONV_ADDR_LIST_SIZE],
                               const TransDataTo5HDParams& p, OPSDK_WHERE) {
    trans_5hd_lists<T>(dstList, srcList, p, file, line);
}
// Transpose: a 16 x 16 matrix of 16-bit elements transposed.
template <class T>
inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, OPSDK_WHERE) {
    static_assert(sizeof(T) == 2, "Transpose (16 x 16) takes 16-bit elements");
    opsdk_rt::ub_access(src.addr_, 512, file, line);
    opsdk_rt::ub_access(dst.addr_, 512, file, line);
    T in[256];
    std::memcpy(in, src.addr_, sizeof(in));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) dst.addr_[j * 16 + i] = in[i * 16 + j];
}

// ---------------------------------------------------------------- broadcasts
struct BrcbRepeatParams {
    uint16_t dstBlkStride = 1, dstRepStride = 8;
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t b, uint16_t r) : dstBlkStride(b), dstRepStride(r) {}
};
// Brcb: each of a repeat's 8 source elements fills one 32 B block of dst.
template <class T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeat, const BrcbRepeatParams& p,
                 OPSDK_WHERE) {
    opsdk_rt::ub_access(src.addr_, uint64_t(repeat) * 8 * sizeof(T), file, line);
    for (uint32_t r = 0; r < repeat; ++r)
        for (uint32_t b = 0; b < 8; ++b) {
            T* block = dst.addr_ + (uint64_t(r) * p.dstRepStride + uint64_t(b) * p.dstBlkStride) * EPB<T>;
            opsdk_rt::ub_access(block, 32, file, line);
            for (int e = 0; e < EPB<T>; ++e) block[e] = src.addr_[r * 8 + b];
        }
}
// BroadCast (advanced API): src of srcShape repeated along its size-1 axes to dstShape.
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], const LocalTensor<uint8_t>& = {}, OPSDK_WHERE) {
    uint64_t rows = dim == 2 ? dstShape[0] : 1, cols = dstShape[dim - 1];
    uint64_t srcRows = dim == 2 ? srcShape[0] : 1, srcCols = srcShape[dim - 1];
    opsdk_rt::ub_access(dst.addr_, rows * cols * sizeof(T), file, line);
    std::vector<T> from(src.addr_, src.addr_ + srcRows * srcCols);
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t j = 0; j < cols; ++j)
            dst.addr_[i * cols + j] = from[(srcRows == 1 ? 0 : i) * srcCols + (srcCols == 1 ? 0 : j)];
}
// Broadcast: BroadCast's newer name.
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], const LocalTensor<uint8_t>& tmp = {}, OPSDK_WHERE) {
    BroadCast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, tmp, file, line);
}

// ---------------------------------------------------------------- more vector instructions
struct CopyRepeatParams {
    uint16_t dstStride = 1, srcStride = 1, dstRepeatSize = 8, srcRepeatSize = 8;
    CopyRepeatParams() = default;
    CopyRepeatParams(uint16_t d, uint16_t s, uint16_t dr, uint16_t sr) : dstStride(d), srcStride(s), dstRepeatSize(dr), srcRepeatSize(sr) {}
};
// Copy: a UB-to-UB move by the vector unit, level-0 form.
template <class T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeat,
                 const CopyRepeatParams& p, OPSDK_WHERE) {
    uint64_t m[2];
    unary_lv0(dst, src, mask_of(mask, m), isSetMask, repeat, UnaryRepeatParams(p.dstStride, p.srcStride, p.dstRepeatSize, p.srcRepeatSize),
              [](T a) { return a; });
}
template <class T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeat,
                 const CopyRepeatParams& p, OPSDK_WHERE) {
    unary_lv0(dst, src, mask, isSetMask, repeat, UnaryRepeatParams(p.dstStride, p.srcStride, p.dstRepeatSize, p.srcRepeatSize),
              [](T a) { return a; });
}
template <class T, class U>
inline void CreateVecIndex(const LocalTensor<T>& dst, const U& first, uint32_t count, OPSDK_WHERE) {
    opsdk_rt::ub_access(dst.addr_, uint64_t(count) * sizeof(T), file, line);
    for (uint32_t i = 0; i < count; ++i) dst.addr_[i] = opsdk_rt::store<T>(opsdk_rt::Calc<T>(first) + i);
}
template <class T, class U, class V>
inline void ArithProgression(const LocalTensor<T>& dst, const U first, const V diff, const int32_t count, OPSDK_WHERE) {
    opsdk_rt::ub_access(dst.addr_, uint64_t(count) * sizeof(T), file, line);
    for (int32_t i = 0; i < count; ++i) dst.addr_[i] = opsdk_rt::store<T>(opsdk_rt::Calc<T>(first) + opsdk_rt::Calc<T>(diff) * i);
}
// Gather: dst[i] is the element at byte offset srcOffset[i] + base of src.
template <class T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& offsets, const uint32_t base,
                   const uint32_t count, OPSDK_WHERE) {
    const uint8_t* from = reinterpret_cast<const uint8_t*>(src.addr_) + base;
    for (uint32_t i = 0; i < count; ++i) {
        opsdk_rt::ub_access(from + offsets.addr_[i], sizeof(T), file, line);
        std::memcpy(&dst.addr_[i], from + offsets.addr_[i], sizeof(T));
    }
}
// WholeReduceMax / Min: per repeat the best masked element and its index in the repeat,
// written as the order says; dstRepStride counts one repeat's result (2 elements, or 1).
template <class T, bool best>
inline void whole_reduce_best(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t* mask, bool set, int32_t repeat,
                              int32_t dstRep, int32_t srcBlk, int32_t srcRep, ReduceOrder order) {
    Operand<T> s{src.addr_, uint32_t(srcBlk), uint32_t(srcRep)};
    std::vector<int64_t> at(repeat, -1);
    level0(mask, set, EPR<T>, uint32_t(repeat), [&](uint32_t r, uint32_t i) {
        if (at[r] < 0) { at[r] = i; return; }
        opsdk_rt::Calc<T> a = s.at(r, i), b = s.at(r, uint32_t(at[r]));
        if (best ? a > b : a < b) at[r] = i;
    });
    bool both = order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE;
    for (int32_t r = 0; r < repeat; ++r) {
        if (at[r] < 0) continue;
        T* out = dst.addr_ + uint64_t(r) * dstRep * (both ? 2 : 1);
        T value = s.at(r, uint32_t(at[r])), index;
        if constexpr (sizeof(T) == 4) { uint32_t k = uint32_t(at[r]); std::memcpy(&index, &k, 4); }
        else { uint16_t k = uint16_t(at[r]); std::memcpy(&index, &k, sizeof(T)); }
        if (order == ReduceOrder::ORDER_INDEX_VALUE) { out[0] = index; out[1] = value; }
        else if (order == ReduceOrder::ORDER_ONLY_INDEX) out[0] = index;
        else { out[0] = value; if (both) out[1] = index; }
    }
}
#define OPSDK_WHOLE_REDUCE(NAME, BEST)                                                                             \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const int32_t repeat,    \
                     const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,           \
                     ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {                                         \
        uint64_t m[2];                                                                                             \
        whole_reduce_best<T, BEST>(dst, src, mask_of(mask, m), isSetMask, repeat, dstRepStride, srcBlkStride,      \
                                   srcRepStride, order);                                                           \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                  \
                     const int32_t repeat, const int32_t dstRepStride, const int32_t srcBlkStride,                 \
                     const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX) {             \
        whole_reduce_best<T, BEST>(dst, src, mask, isSetMask, repeat, dstRepStride, srcBlkStride, srcRepStride,    \
                                   order);                                                                         \
    }
OPSDK_WHOLE_REDUCE(WholeReduceMax, true)
OPSDK_WHOLE_REDUCE(WholeReduceMin, false)

// GatherMask: the elements of src0 whose pattern bit is set, packed at the start of dst;
// the pattern is built in (1: even, 2: odd, 3-6: one of every four, 7: all) or a bit
// tensor (uint16/uint32 words, one bit per element of a repeat). rsvdCnt: how many.
struct GatherMaskParams {
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 1, src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
    GatherMaskParams() = default;
    GatherMaskParams(uint8_t b, uint16_t r, uint16_t s0, uint8_t s1) : src0BlockStride(b), repeatTimes(r), src0RepeatStride(s0), src1RepeatStride(s1) {}
};
template <class T, class P>
inline void gather_mask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, P picked, bool reduceMode, uint32_t mask,
                        const GatherMaskParams& p, uint64_t& count, const char* file, int line) {
    Operand<T> s{src0.addr_, p.src0BlockStride, p.src0RepeatStride};
    uint32_t per = reduceMode ? mask : uint32_t(EPR<T>);
    uint64_t n = 0;
    for (uint32_t r = 0; r < p.repeatTimes; ++r)
        for (uint32_t i = 0; i < per; ++i)
            if (picked(r, i)) dst.addr_[n++] = s.at(r, i);
    opsdk_rt::ub_access(dst.addr_, n * sizeof(T), file, line);
    count = n;
}
template <class T>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt, OPSDK_WHERE) {
    gather_mask(dst, src0, [pattern](uint32_t, uint32_t i) {
        return pattern == 7 || (pattern == 1 && i % 2 == 0) || (pattern == 2 && i % 2 == 1) ||
               (pattern >= 3 && pattern <= 6 && i % 4 == uint32_t(pattern - 3));
    }, reduceMode, mask, p, rsvdCnt, file, line);
}
template <class T, class U>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& pattern, const bool reduceMode,
                       const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt, OPSDK_WHERE) {
    const uint8_t* bits = reinterpret_cast<const uint8_t*>(pattern.addr_);
    uint32_t stride = uint32_t(p.src1RepeatStride) * 32;
    gather_mask(dst, src0, [&](uint32_t r, uint32_t i) { return (bits[r * stride + i / 8] >> (i % 8)) & 1; },
                reduceMode, mask, p, rsvdCnt, file, line);
}

// FusedMulAdd: dst = src0 * dst + src1, count and level-0 forms.
template <class T>
inline void FusedMulAdd(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const int32_t& count,
                        OPSDK_WHERE) {
    for (const T* p : {dst.addr_, src0.addr_, src1.addr_}) opsdk_rt::ub_access(p, uint64_t(count) * sizeof(T), file, line);
    for (int32_t i = 0; i < count; ++i)
        dst.addr_[i] = opsdk_rt::store<T>(opsdk_rt::Calc<T>(src0.addr_[i]) * opsdk_rt::Calc<T>(dst.addr_[i]) + opsdk_rt::Calc<T>(src1.addr_[i]));
}
template <class T, bool isSetMask = true>
inline void FusedMulAdd(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,
                        const uint8_t repeat, const BinaryRepeatParams& p, OPSDK_WHERE) {
    Operand<T> d{dst.addr_, p.dstBlkStride, p.dstRepStride}, x{src0.addr_, p.src0BlkStride, p.src0RepStride},
        y{src1.addr_, p.src1BlkStride, p.src1RepStride};
    uint64_t m[2];
    level0(mask_of(mask, m), isSetMask, EPR<T>, repeat, [&](uint32_t r, uint32_t i) {
        d.at(r, i) = opsdk_rt::store<T>(opsdk_rt::Calc<T>(x.at(r, i)) * opsdk_rt::Calc<T>(d.at(r, i)) + opsdk_rt::Calc<T>(y.at(r, i)));
    });
}

// Advanced math (lib/math): the count form, with or without a shared temp buffer.
#define OPSDK_MATH(NAME, EXPR)                                                                                     \
    template <class T, bool isReuseSource = false>                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count = 0, OPSDK_WHERE) {      \
        count = count ? count : dst.GetSize();                                                                     \
        unary_count(dst, src, int32_t(count), [](T a0) { float a = float(a0); return opsdk_rt::store<T>(EXPR); }, file, line); \
    }                                                                                                              \
    template <class T, bool isReuseSource = false>                                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>&,            \
                     uint32_t count = 0, OPSDK_WHERE) {                                                            \
        count = count ? count : dst.GetSize();                                                                     \
        unary_count(dst, src, int32_t(count), [](T a0) { float a = float(a0); return opsdk_rt::store<T>(EXPR); }, file, line); \
    }                                                                                                              \
    template <class T, bool isReuseSource = false, class C, OPSDK_EXACT(C, uint32_t)>                              \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, C count) {                              \
        NAME<T, isReuseSource>(dst, src, count, OPSDK_NOWHERE);                                                    \
    }
OPSDK_MATH(Sigmoid, 1.0f / (1.0f + std::exp(-a)))
OPSDK_MATH(Tanh, std::tanh(a))
OPSDK_MATH(Erf, std::erf(a))
OPSDK_MATH(Cos, std::cos(a))
OPSDK_MATH(Sin, std::sin(a))
OPSDK_MATH(Log, std::log(a))
OPSDK_MATH(Log2, std::log2(a))
OPSDK_MATH(Floor, std::floor(a))
OPSDK_MATH(Ceil, std::ceil(a))
OPSDK_MATH(Round, std::nearbyint(a))
OPSDK_MATH(Trunc, std::trunc(a))
OPSDK_MATH(Sign, float((a > 0) - (a < 0)))
OPSDK_MATH(Silu, a / (1.0f + std::exp(-a)))
OPSDK_MATH(Log10, std::log10(a))
OPSDK_MATH(Tan, std::tan(a))
OPSDK_MATH(Acos, std::acos(a))
OPSDK_MATH(Asin, std::asin(a))
OPSDK_MATH(Atan, std::atan(a))
OPSDK_MATH(Sinh, std::sinh(a))
OPSDK_MATH(Cosh, std::cosh(a))
OPSDK_MATH(Erfc, std::erfc(a))

template <class T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dst, const LocalTensor<T>& base, const LocalTensor<T>& exp, uint32_t count = 0, OPSDK_WHERE) {
    count = count ? count : dst.GetSize();
    for (uint32_t i = 0; i < count; ++i) dst.addr_[i] = opsdk_rt::store<T>(std::pow(float(base.addr_[i]), float(exp.addr_[i])));
}
template <class T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dst, const LocalTensor<T>& base, const T& exp, uint32_t count = 0, OPSDK_WHERE) {
    count = count ? count : dst.GetSize();
    for (uint32_t i = 0; i < count; ++i) dst.addr_[i] = opsdk_rt::store<T>(std::pow(float(base.addr_[i]), float(exp)));
}
// Power with a scalar base: dst[i] = base ** exp[i].
template <class T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dst, const T& base, const LocalTensor<T>& exp, uint32_t count = 0, OPSDK_WHERE) {
    count = count ? count : dst.GetSize();
    for (uint32_t i = 0; i < count; ++i) dst.addr_[i] = opsdk_rt::store<T>(std::pow(float(base), float(exp.addr_[i])));
}
template <class T, bool isReuseSource = false, class E>
inline void Power(const LocalTensor<T>& dst, const LocalTensor<T>& base, const E& exp, const LocalTensor<uint8_t>&,
                  uint32_t count = 0, OPSDK_WHERE) {
    Power<T, isReuseSource>(dst, base, exp, count, file, line);
}

// ---------------------------------------------------------------- GM initialisation, scalars
template <class T>
inline void InitGlobalMemory(const GlobalTensor<T>& gm, const uint64_t size, const T value, OPSDK_WHERE) {
    if (!opsdk_rt::gm_access(gm.addr_, size * sizeof(T), true, file, line)) return;
    for (uint64_t i = 0; i < size; ++i) gm.addr_[i] = value;
}
template <class T>
inline void InitOutput(const GlobalTensor<T>& gm, const uint64_t size, const T value = T(0), OPSDK_WHERE) {
    InitGlobalMemory(gm, size, value, file, line);
}
// Axpy: dst += src * scalar (dst may be wider than src).
template <class D, class S, class U>
inline void Axpy(const LocalTensor<D>& dst, const LocalTensor<S>& src, const U scalar, const int32_t count, OPSDK_WHERE) {
    opsdk_rt::ub_access(dst.addr_, uint64_t(count) * sizeof(D), file, line);
    opsdk_rt::ub_access(src.addr_, uint64_t(count) * sizeof(S), file, line);
    for (int32_t i = 0; i < count; ++i)
        dst.addr_[i] = opsdk_rt::store<D>(opsdk_rt::Calc<D>(dst.addr_[i]) + float(src.addr_[i]) * float(scalar));
}
struct int4b_t { int8_t value; };
enum class CacheLine { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <class T, CacheLine line, DcciDst dst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <class T, CacheLine line>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <class T, CacheLine line, DcciDst dst>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}
template <class T, class U> struct IsSameType { static constexpr bool value = std::is_same_v<T, U>; };
inline float ToFloat(const bfloat16_t& v) { return float(v); }
// Cast of a bfloat16 scalar: its float value.
inline float Cast(const bfloat16_t& v) { return float(v); }
inline bfloat16_t ToBfloat16(const float& v) { return bfloat16_t(v); }
template <class T, class U>
__aicore__ inline constexpr auto DivCeil(T value, U unit) { return unit ? (value + unit - 1) / unit : 0; }
// Ceil of two scalars: the ceiling of their quotient (the vector Ceil takes tensors).
template <class T, class U, std::enable_if_t<std::is_arithmetic_v<T> && std::is_arithmetic_v<U>, int> = 0>
__aicore__ inline constexpr auto Ceil(T value, U unit) { return DivCeil(value, unit); }
// AscendC::Std: the standard library's type traits and min/max on the core.
namespace Std {
using std::is_same;
using std::is_same_v;
using std::enable_if;
using std::conditional;
template <class T> inline constexpr bool always_false_v = false;
template <class T, class U, class R = std::common_type_t<T, U>> constexpr R min(T a, U b) { return R(a) < R(b) ? R(a) : R(b); }
template <class T, class U, class R = std::common_type_t<T, U>> constexpr R max(T a, U b) { return R(a) < R(b) ? R(b) : R(a); }
}  // namespace Std

template <class T, class U>
__aicore__ inline constexpr T AlignUp(T value, U unit) { return unit ? (value + unit - 1) / unit * unit : 0; }
template <class T, class U>
__aicore__ inline constexpr T CeilDivision(T value, U unit) { return unit ? (value + unit - 1) / unit : 0; }

}  // namespace AscendC

inline constexpr int g_coreType = AscendC::AIV;
// The CCE compiler's block_idx / block_num, per block thread.
inline thread_local int64_t block_idx = 0;
inline thread_local int64_t block_num = 1;
