// The tiling data of TailAdd and TailAddPast (a plain struct both sides include).
#pragma once
#include <cstdint>

struct TailAddTiling {
    uint32_t total;    // elements
    uint32_t perCore;  // elements per core, a multiple of 32 bytes (the last core: what is left)
};
