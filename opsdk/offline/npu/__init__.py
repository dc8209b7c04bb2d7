"""The NPU side offline: the emulated device, streams, graph capture and a torch_npu stand-in."""
