// opsdk's AscendC stand-in, the runtime half: the GM buffers of one launch (guard zones,
// per-byte writer tags, workspace poison), the findings, each block's UB arena and the
// barrier SyncAll waits at. Written by opsdk from the API's documented behaviour; no
// CANN header is copied. One launch at a time per process (the worker runs them in turn).
#pragma once
#include <algorithm>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <map>
#include <tuple>
#include <mutex>
#include <condition_variable>
#include <stdexcept>
#include <thread>

namespace opsdk_rt {

// Thrown where the hardware would hang or fault (UB overflow, a queue with nothing to give):
// the block ends there, the others go on.
struct Stop {};

struct Buffer {
    std::string name;
    uint8_t* base;
    uint64_t size;
    bool workspace;
    uint32_t* tag;  // per byte: 0 never written, else phase << 9 | atomic << 8 | (block + 1)
};

constexpr uint64_t GUARD = 4096;  // bytes each side of a GM buffer: writes past the end land here
constexpr uint8_t GUARD_BYTE = 0xA5;

struct Finding {
    std::string kind, file, what;
    int line, block, count;
};

struct State {
    std::mutex mu;
    std::vector<Buffer> buffers;
    std::vector<Finding> findings;
    uint32_t block_num = 1;
    uint64_t ub_size = 196608;
    uint64_t tiling_key = 0;
    uint64_t sys_workspace = 16u << 20;
    // SyncAll: a barrier whose parties shrink as blocks end (an ended block never arrives).
    std::condition_variable cv;
    uint32_t waiting = 0, alive = 0, launched = 0;
    uint64_t generation = 0;
    // CrossCoreSetFlag (mode 0: all vector cores): the sets of each flag id, and the blocks
    // waiting at CrossCoreWaitFlag.
    uint64_t flag_sets[16] = {};
    uint32_t flag_waiting = 0;
};
inline State g;

inline thread_local int t_block = 0;
inline thread_local uint32_t t_phase = 0;  // SyncAlls this block has passed
inline thread_local int t_atomic = 0;      // 0 none, 1 add, 2 max, 3 min
inline thread_local uint8_t* t_ub = nullptr;
inline thread_local uint64_t t_mask[2] = {~0ull, ~0ull};
inline thread_local bool t_counter = false;
inline thread_local void* t_pipe = nullptr;
inline thread_local uint64_t t_flag_waits[16] = {};  // CrossCoreWaitFlags this block passed

inline const char* base_name(const char* file) { return file ? file : "?"; }

inline void finding_locked(const char* kind, const char* file, int line, const std::string& what) {
    for (auto& f : g.findings) {
        if (f.kind == kind && f.file == base_name(file) && f.line == line) {
            ++f.count;
            return;
        }
    }
    g.findings.push_back({kind, base_name(file), what, line, t_block, 1});
}

inline void finding(const char* kind, const char* file, int line, const std::string& what) {
    std::lock_guard<std::mutex> lock(g.mu);
    finding_locked(kind, file, line, what);
}

[[noreturn]] inline void stop(const char* kind, const char* file, int line, const std::string& what) {
    finding(kind, file, line, what);
    throw Stop{};
}

inline std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char* format, ...) {
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    return text;
}

inline Buffer* owner_of(const uint8_t* p) {
    for (auto& b : g.buffers) {
        if (p + GUARD >= b.base && p < b.base + b.size + GUARD) return &b;
    }
    return nullptr;
}

// Checks one GM access of n bytes at p and records its writes; false when it cannot be
// done at all (outside every buffer and its guard zones). Out-of-bounds parts within a
// guard zone are done, as the hardware would do them, and are a finding. A plain write
// that brings its bytes (data) is done here, under the lock, and races another block's
// only where they differ: two cores writing the same values leave one result.
inline bool gm_access(const void* ptr, uint64_t n, bool write, const char* file, int line,
                      const void* data = nullptr) {
    if (n == 0) return true;
    const uint8_t* p = static_cast<const uint8_t*>(ptr);
    std::lock_guard<std::mutex> lock(g.mu);
    Buffer* b = owner_of(p);
    const char* verb = write ? "write" : "read";
    // (n compared with the room left: p + n wraps for a length computed negative)
    if (b == nullptr || n > uint64_t(b->base + b->size + GUARD - p)) {
        finding_locked("gm-out-of-bounds", file, line,
                       fmt("GM %s of %llu B at %p is outside every GM buffer", verb,
                           (unsigned long long)n, (const void*)p));
        return false;
    }
    int64_t off = p - b->base;
    // A read past the end within what Ascend allocates a tensor (its size rounded up to
    // 32 B, and 32 B more: aclrtMalloc's rule, which DataCopy's 32 B blocks count on)
    // changes nothing; the guard bytes it reads show if they are used (a wrong number).
    bool allocated = !write && off >= 0 && off + n <= (b->size + 31) / 32 * 32 + 32;
    if (!allocated && (off < 0 || off + (int64_t)n > (int64_t)b->size)) {
        int64_t past = off < 0 ? -off : off + (int64_t)n - (int64_t)b->size;
        finding_locked("gm-out-of-bounds", file, line,
                       fmt("GM %s of %llu B at offset %lld of %s (%llu B): %lld B %s", verb,
                           (unsigned long long)n, (long long)off, b->name.c_str(),
                           (unsigned long long)b->size, (long long)past,
                           off < 0 ? "before its start" : "past its end"));
    }
    uint64_t lo = off < 0 ? 0 : off, hi = std::min<uint64_t>(off + n, b->size);
    uint32_t me = (t_phase << 9) | (t_atomic ? 256u : 0u) | uint32_t(t_block + 1);
    auto others = [&](uint32_t was) {  // another block's plain write since the last SyncAll
        return was != 0 && (was & 255u) != (me & 255u) && (was >> 9) == t_phase &&
               !((was & 256u) && (me & 256u));
    };
    bool changes = data == nullptr;  // whether it changes a byte another block wrote
    for (uint64_t i = lo; i < hi && !changes; ++i)
        changes = others(b->tag[i]) && static_cast<const uint8_t*>(data)[i - off] != b->base[i];
    bool reported = false;
    for (uint64_t i = lo; i < hi; ++i) {
        uint32_t was = b->tag[i];
        if (!write || t_atomic) {
            if (was == 0 && b->workspace && !reported) {
                uint64_t end = i;
                while (end < hi && b->tag[end] == 0) ++end;
                finding_locked("workspace-read-unwritten", file, line,
                               fmt("%s %s bytes [%llu, %llu) never written (poison)",
                                   t_atomic && write ? "an atomic update of" : "a read of",
                                   b->name.c_str(), (unsigned long long)i,
                                   (unsigned long long)end));
                reported = true;
            }
        }
        if (write) {
            if (changes && others(was) && !reported) {
                uint64_t end = i;
                while (end < hi && (b->tag[end] & 255u) == (was & 255u)) ++end;
                finding_locked("gm-write-race", file, line,
                               fmt("blocks %u and %d both write bytes [%llu, %llu) of %s "
                                   "between the same SyncAlls, without atomics",
                                   (was & 255u) - 1, t_block, (unsigned long long)i,
                                   (unsigned long long)end, b->name.c_str()));
                reported = true;
            }
            b->tag[i] = me;
        }
    }
    if (write && data) std::memcpy(const_cast<uint8_t*>(p), data, n);
    return true;
}

// Whether n bytes at ptr are inside the UB; a finding where not (a copy then moves
// nothing: past the UB it would write the process's memory, not the core's).
inline bool ub_access(const void* ptr, uint64_t n, const char* file, int line) {
    const uint8_t* p = static_cast<const uint8_t*>(ptr);
    if (t_ub == nullptr || n == 0) return true;
    if (p < t_ub || p + n > t_ub + g.ub_size) {
        finding("ub-out-of-bounds", file, line,
                fmt("UB access of %llu B at offset %lld: beyond the %llu B of UB",
                    (unsigned long long)n, (long long)(p - t_ub), (unsigned long long)g.ub_size));
        return false;
    }
    return true;
}

// SyncAll: every live block arrives, then all go on (and into the next phase).
inline void sync_all() {
    std::unique_lock<std::mutex> lock(g.mu);
    uint64_t gen = g.generation;
    // A block that ended never arrives: whoever waits after it, first or last, would hang.
    if (g.alive < g.launched && g.waiting == 0)
        finding_locked("sync-hang", "?", 0,
                       fmt("block %d reached SyncAll after %u blocks ended: the hardware would hang",
                           t_block, g.launched - g.alive));
    if (++g.waiting >= g.alive) {
        g.waiting = 0;
        ++g.generation;
        g.cv.notify_all();
    } else {
        g.cv.wait(lock, [&] { return g.generation != gen; });
    }
    ++t_phase;
}

// CrossCoreSetFlag<0>(id) / CrossCoreWaitFlag(id): the wait returns once every block of
// the launch has set the flag as often as this block has waited on it. Every live block
// waiting (here or at SyncAll) with the sets short is a hang on the hardware.
inline void flag_set(uint16_t id) {
    std::lock_guard<std::mutex> lock(g.mu);
    ++g.flag_sets[id % 16];
    g.cv.notify_all();
}

inline void flag_wait(uint16_t id, const char* file, int line) {
    std::unique_lock<std::mutex> lock(g.mu);
    uint64_t target = ++t_flag_waits[id % 16] * g.launched;
    ++g.flag_waiting;
    g.cv.notify_all();
    bool hung = false;
    g.cv.wait(lock, [&] {
        hung = g.flag_sets[id % 16] < target && g.flag_waiting + g.waiting >= g.alive;
        return g.flag_sets[id % 16] >= target || hung;
    });
    --g.flag_waiting;
    if (hung) {
        g.cv.notify_all();
        finding_locked("sync-hang", file, line,
                       fmt("block %d waits at CrossCoreWaitFlag(%u) for sets no block will make: the "
                           "hardware would hang", t_block, unsigned(id)));
        throw Stop{};
    }
}

inline void block_ended() {
    std::lock_guard<std::mutex> lock(g.mu);
    if (g.waiting > 0)
        finding_locked("sync-hang", "?", 0,
                       fmt("block %d ended while %u blocks wait at SyncAll: the hardware would hang", t_block, g.waiting));
    --g.alive;
    g.cv.notify_all();  // a flag waiter's hang check counts the live blocks
    if (g.waiting > 0 && g.waiting >= g.alive) {
        g.waiting = 0;
        ++g.generation;
        g.cv.notify_all();
    }
}

}  // namespace opsdk_rt
