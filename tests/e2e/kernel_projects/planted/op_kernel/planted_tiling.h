// Tiling data of the planted op (a plain struct both sides include).
#pragma once
#include <cstdint>

// Which defect the kernel plants (0: none, the correct twin); test_cann_kernel.py names them.
enum PlantedDefect : uint32_t {
    NONE = 0,
    TAIL_DATACOPY = 1,      // the tail moved with DataCopy rounded up to 32 B, not DataCopyPad
    UB_WHOLE_CORE = 2,      // a temp buffer sized for the core's whole share, not one tile
    WORKSPACE_FIRST = 3,    // the workspace accumulator read before it is ever written
    OVERLAPPING_CORES = 4,  // each core writes its sums 8 elements early: over its neighbour's
    QUEUE_LEAK = 5,         // an input tensor never freed: the third tile finds no buffer
    DOUBLE_FREE = 6,        // the output tensor freed twice
    LAST_ELEMENT = 7,       // the tail one element short: the last output never written
    WILD_POINTER = 8,       // a raw read far outside x: the process crashes
    HANDOFF_SYNCED = 9,     // (correct) after a SyncAll, block 0 rewrites block 1's first 8 outputs
    HANDOFF_RACE = 10,      // without the SyncAll, zeros: blocks 0 and 1 race on those bytes
    DEQUE_AGAIN = 14,       // y dequeued twice per tile, enqueued once (as GroupNormSwishGrad's gamma)
    TAIL_READ_BLOCKS = 15,  // (correct) x's tail read in whole 32 B blocks, as allocated
    ADD_INTO_Z = 16,        // (correct where z starts at 0) the sums added into z atomically
    SAME_VALUES = 13,       // (correct) each core starts 8 elements early: the same sums twice
    SYNC_ONE_BLOCK = 11,    // only block 0 calls SyncAll: it would wait forever
    RAW_PAST_END = 12,      // the last block stores one float past z through a raw pointer
};

struct PlantedTiling {
    uint32_t total;    // elements
    uint32_t perCore;  // elements per core (the last core: what is left)
    uint32_t tile;     // elements per tile, a multiple of 8
    uint32_t defect;
};
