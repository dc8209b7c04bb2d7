// opsdk stand-in: the template tiling keys (ascendc/host_api/tiling/template_argument.h)
#pragma once
#include "ascendc/host_api/tiling/template_argument.h"
