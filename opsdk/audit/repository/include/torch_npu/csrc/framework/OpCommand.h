// opsdk's stand-in of torch_npu's OpCommand, the builder a kernel launches through
// (declared only: the Meta registrations opsdk builds never launch one).
#pragma once
#include <functional>
#include <string>
#include "torch_npu/csrc/core/npu/NPUStream.h"

namespace at_npu {
namespace native {
class OpCommand {
public:
    OpCommand();
    ~OpCommand();
    OpCommand &Name(const std::string &name);
    OpCommand &SetCustomHandler(std::function<int()> handler);
    void Run();
};
}  // namespace native
}  // namespace at_npu
