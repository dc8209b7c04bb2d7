"""The NPU side offline: the emulated device, streams, graph capture and a torch_npu stand-in.

``device`` installs the emulated ``npu`` device (``torch.npu``) from ``_memory`` (npu
memory as relabelled CPU memory), ``_fallback`` (aten ops on CPU aliases) and
``_kernels`` (explicit kernels); ``streams``, ``graphs`` and ``torch_npu`` build on it.
"""

from opsdk.offline.npu._fallback import MissingNpuKernelError
from opsdk.offline.npu._memory import DEVICE, NpuDeviceError, as_cpu, as_npu
from opsdk.offline.npu.device import install, is_installed, npu_module

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
