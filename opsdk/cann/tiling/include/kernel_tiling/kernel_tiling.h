// opsdk stand-in: a kernel-side tiling header the host includes for its plain tiling
// structs. The advanced APIs' tiling structs (SoftMaxTiling, TCubeTiling...) it declares
// in CANN are not modelled: a tiling naming one does not compile, and says which.
#pragma once
#include <cstdint>
