// opsdk's launcher, compiled after the op's kernel source with OPSDK_CALL(a) naming its
// entry called on the argument array a. One launch: the GM buffers made with guard zones
// (outputs and workspace filled with poison), every block a thread with its own UB, then
// the guard zones checked, the outputs copied back and the findings written as lines.
// A tensor list (dynamic) parameter is a LIST block (ListTensorDesc's layout) whose pointer
// table holds, until the launch starts, the indices of its members' buffers (after the
// entry's parameters): each becomes that buffer's GM address.
#pragma once
#include <thread>

namespace opsdk_rt {
enum Kind { INPUT = 0, OUTPUT = 1, WORKSPACE = 2, TILING = 3, ABSENT = 4, LIST = 5, FILLED = 6 };
constexpr uint8_t POISON = 0xFF;  // NaN in every float format

// Memory kept from one launch to the next of the worker (grown when a launch needs more):
// the GM buffers' blocks by parameter and each block's UB. A launch pays for filling the
// bytes it uses, not for fresh pages (a 910B kernel's workspace starts with 16 MB).
inline std::vector<std::vector<uint8_t>> kept_gm, kept_ub;
inline uint8_t* kept(std::vector<std::vector<uint8_t>>& kept_memory, size_t i, uint64_t size) {
    if (kept_memory.size() <= i) kept_memory.resize(i + 1);
    if (kept_memory[i].size() < size) kept_memory[i].resize(size);
    return kept_memory[i].data();
}

inline std::string report() {
    std::string out;
    for (auto& f : g.findings)
        out += fmt("finding\t%s\t%d\t%s\t%d\t%d\t", f.kind.c_str(), f.block, f.file.c_str(), f.line, f.count) + f.what + "\n";
    return out;
}
}  // namespace opsdk_rt

// args[i]: the bytes of buffer i (outputs: copied back there), sizes[i] its size, kinds[i] its
// opsdk_rt::Kind, names: the names tab-separated. The report goes to `report` (capacity
// `cap`; `needed` says the size when it does not fit: 2 is returned, else 0).
extern "C" int opsdk_kernel_launch(uint8_t** args, const uint64_t* sizes, const int* kinds, int nargs, const char* names,
                                   uint32_t block_dim, uint64_t tiling_key, uint64_t ub_size, char* report, size_t cap,
                                   size_t* needed) {
    using namespace opsdk_rt;
    static std::string last;
    if (args != nullptr) {
        g.findings.clear();
        g.buffers.clear();
        g.block_num = block_dim;
        g.ub_size = ub_size;
        g.tiling_key = tiling_key;
        std::vector<uint8_t*> gm(nargs, nullptr), blocks(nargs, nullptr);
        std::string all = names;
        for (int i = 0; i < nargs; ++i) {
            std::string name = all.substr(0, all.find('\t'));
            all = all.find('\t') == std::string::npos ? "" : all.substr(all.find('\t') + 1);
            if (kinds[i] == ABSENT) continue;
            blocks[i] = kept(kept_gm, i, sizes[i] + 2 * GUARD);
            std::memset(blocks[i], GUARD_BYTE, GUARD);
            std::memset(blocks[i] + GUARD + sizes[i], GUARD_BYTE, GUARD);
            gm[i] = blocks[i] + GUARD;
            // (a FILLED output starts as the runtime fills it: OpDef's InitValue)
            if (kinds[i] == INPUT || kinds[i] == TILING || kinds[i] == LIST || kinds[i] == FILLED)
                std::memcpy(gm[i], args[i], sizes[i]);
            else std::memset(gm[i], POISON, sizes[i]);
            uint32_t* tag = static_cast<uint32_t*>(std::calloc(sizes[i] + 1, sizeof(uint32_t)));
            if (kinds[i] != WORKSPACE && kinds[i] != OUTPUT && kinds[i] != FILLED)  // inputs count as written; outputs as free to write
                std::fill(tag, tag + sizes[i], 0xFFFFFF00u);
            g.buffers.push_back({name, gm[i], sizes[i], kinds[i] == WORKSPACE, tag});
        }
        for (int i = 0; i < nargs; ++i) {
            if (kinds[i] != LIST) continue;
            uint64_t* words = reinterpret_cast<uint64_t*>(gm[i]);
            for (uint64_t k = words[0] / 8; k < sizes[i] / 8; ++k) {
                uint64_t member = words[k];
                words[k] = member < uint64_t(nargs) ? reinterpret_cast<uint64_t>(gm[member]) : 0;
            }
        }
        g.alive = g.launched = block_dim;
        g.waiting = g.flag_waiting = 0;
        std::fill(std::begin(g.flag_sets), std::end(g.flag_sets), 0);
        std::vector<std::thread> threads;
        for (uint32_t b = 0; b < block_dim; ++b) kept(kept_ub, b, ub_size + 65536);
        for (uint32_t b = 0; b < block_dim; ++b) {
            threads.emplace_back([&, b] {
                t_block = int(b);
                block_idx = b;
                block_num = block_dim;
                t_phase = 0;
                t_atomic = 0;
                t_counter = false;
                t_mask[0] = t_mask[1] = ~0ull;
                t_ub = kept_ub[b].data();
                std::memset(t_ub, POISON, ub_size + 65536);  // UB holds stale data, never zeros
                try {
                    OPSDK_CALL(gm.data());
                } catch (const Stop&) {
                } catch (const std::exception& e) {
                    finding("exception", "?", 0, e.what());
                }
                t_ub = nullptr;
                block_ended();
            });
        }
        for (auto& t : threads) t.join();
        t_block = -1;  // what follows is the launch's, no block's
        bool seen = false;  // a checked access past an end already said so
        for (auto& f : g.findings) seen = seen || f.kind == "gm-out-of-bounds";
        for (auto& b : g.buffers) {
            for (uint64_t k = 0; !seen && k < GUARD; ++k) {
                bool before = b.base[-int64_t(GUARD) + int64_t(k)] != GUARD_BYTE, after = b.base[b.size + k] != GUARD_BYTE;
                if (before || after) {
                    finding("gm-out-of-bounds", "?", 0,
                            fmt("the guard zone %s %s was written (a write through a raw pointer)", after ? "after" : "before",
                                b.name.c_str()));
                    break;
                }
            }
        }
        for (int i = 0; i < nargs; ++i) {
            if (kinds[i] == OUTPUT || kinds[i] == FILLED) std::memcpy(args[i], gm[i], sizes[i]);
        }
        for (auto& b : g.buffers) std::free(b.tag);
        g.buffers.clear();
        last = opsdk_rt::report();
    }
    if (last.size() + 1 > cap) {
        *needed = last.size() + 1;
        return 2;
    }
    std::memcpy(report, last.c_str(), last.size() + 1);
    return 0;
}
