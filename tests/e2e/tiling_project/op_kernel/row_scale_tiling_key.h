// The template arguments of RowScale's kernel: its schedule mode and whether x is half.
#pragma once
#include "ascendc/host_api/tiling/template_argument.h"

ASCENDC_TPL_ARGS_DECL(RowScale, ASCENDC_TPL_UINT_DECL(schMode, 2, ASCENDC_TPL_UI_LIST, 0, 1),
                      ASCENDC_TPL_BOOL_DECL(isHalf, 0, 1), );
ASCENDC_TPL_SEL(ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_UINT_SEL(schMode, ASCENDC_TPL_UI_LIST, 0, 1),
                                     ASCENDC_TPL_BOOL_SEL(isHalf, 0, 1)), );
