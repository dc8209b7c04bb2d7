"""The NPU side offline: the emulated device, and torch_npu's Python over a native stand-in.

``device`` installs the emulated ``npu`` device (``torch.npu``) from ``_memory`` (npu
memory as relabelled CPU memory), ``_fallback`` (aten ops on CPU aliases) and
``_kernels`` (explicit kernels). ``torch_npu`` runs torch_npu's real Python (graphs,
streams, its Dynamo backends) over ``native``, the stand-in for its native module,
built from ``streams`` (streams and events) and ``capture`` (graph capture and replay).
"""

from opsdk._runtime.npu._fallback import MissingNpuKernelError
from opsdk._runtime.npu._memory import DEVICE, NpuDeviceError, as_cpu, as_npu
from opsdk._runtime.npu.emulator import install, is_installed, npu_module

__all__ = [
    "DEVICE",
    "MissingNpuKernelError",
    "NpuDeviceError",
    "as_cpu",
    "as_npu",
    "install",
    "is_installed",
    "npu_module",
]
