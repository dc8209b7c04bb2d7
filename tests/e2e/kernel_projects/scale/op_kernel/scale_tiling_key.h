// The scale op's template tiling key: MODE, 1 bit wide.
#pragma once
#include "ascendc/host_api/tiling/template_argument.h"

ASCENDC_TPL_ARGS_DECL(Scale, ASCENDC_TPL_UINT_DECL(MODE, 1, ASCENDC_TPL_UI_LIST, 0, 1), );
ASCENDC_TPL_SEL(ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_UINT_SEL(MODE, ASCENDC_TPL_UI_LIST, 0, 1)), );
