// opsdk's stand-in of torch_npu's stream API, as an op library's host code names it.
// Declared only: a Meta function that calls it does not link (a finding, not a crash).
#pragma once
#include <c10/core/Device.h>
#include "acl/acl.h"

namespace c10_npu {
class NPUStream {
public:
    aclrtStream stream() const;
    c10::DeviceIndex device_index() const;
};
NPUStream getCurrentNPUStream(c10::DeviceIndex device_index = -1);
}  // namespace c10_npu
