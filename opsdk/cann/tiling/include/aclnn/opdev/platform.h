// opsdk stand-in: tilings include it and ask the chip through platform_ascendc
// (opsdk_tiling.h), which answers for the chip opsdk runs them on.
#pragma once
#include "opsdk_tiling.h"
