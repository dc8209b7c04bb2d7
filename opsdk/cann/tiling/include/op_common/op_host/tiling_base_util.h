// opsdk stand-in: the API this header declares is in opsdk_tiling.h (through opsdk_gert.h)
#pragma once
#include "opsdk_gert.h"
