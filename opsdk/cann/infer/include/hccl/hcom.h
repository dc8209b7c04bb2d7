// opsdk stand-in: CANN's collective-communication API (hccl/hcom.h). Inference sources
// include it beside communication helpers they do not call: its result and handle types
// are named, nothing else.
#pragma once
#include "opsdk_gert.h"

enum HcclResult { HCCL_SUCCESS = 0, HCCL_E_PARA = 1 };
using HcclComm = void *;
