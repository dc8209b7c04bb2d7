#pragma once

#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)
// the library's own spellings of torch's registration macros
#define PLANTED_LIBRARY(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)
#define PLANTED_LIBRARY_IMPL(NAME, DEVICE, MODULE) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)
