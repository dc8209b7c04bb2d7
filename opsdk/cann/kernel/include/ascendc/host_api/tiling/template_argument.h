// opsdk's stand-in: the template tiling-key declarations are read by opsdk's runner (it
// instantiates the kernel's template for the key a tiling chose); on the kernel side they
// declare nothing.
#pragma once
#define ASCENDC_TPL_ARGS_DECL(...)
#define ASCENDC_TPL_SEL(...)
