// opsdk stand-in: CANN base/err_msg.h declares tiling, runtime or communication API that shape
// inference does not use; opsdk_gert.h has what inference sources ask of it.
#pragma once
#include "opsdk_gert.h"
