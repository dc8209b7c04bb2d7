// opsdk's stand-in of torch_npu's device guard (declared only).
#pragma once
#include <c10/core/Device.h>

namespace c10_npu {
struct NPUGuard {
    explicit NPUGuard(c10::Device device);
    explicit NPUGuard(c10::DeviceIndex index);
    ~NPUGuard();
};
}  // namespace c10_npu
