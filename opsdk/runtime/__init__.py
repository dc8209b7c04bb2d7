"""The offline runtime: what stands in for the NPU, CANN and TorchAir's native layers."""
