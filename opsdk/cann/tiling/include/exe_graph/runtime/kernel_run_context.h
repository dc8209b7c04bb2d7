// opsdk's stand-in for CANN's exe_graph/runtime/kernel_run_context.h: the run context every
// gert context is made from. Tiling sources include it for the contexts alone (ops-nn's
// swi_glu_grad_tiling_regbase.cpp), which opsdk's tiling_context.h declares.
#pragma once
#include "exe_graph/runtime/tiling_context.h"
