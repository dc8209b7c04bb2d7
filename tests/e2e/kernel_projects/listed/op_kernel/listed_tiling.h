// Tiling data of the listed op (a plain struct both sides include).
#pragma once
#include <cstdint>

enum ListedDefect : uint32_t {
    LISTED_NONE = 0,         // the correct twin
    LISTED_PAST_SECOND = 1,  // the last tile of x[1] read 16 floats past its end
};

struct ListedTiling {
    uint32_t tile;  // floats per tile, a multiple of 8
    uint32_t defect;
};
