"""Public: the "npu" device an op package registers its kernels for.

``ensure_npu()`` makes ``torch.device("npu")`` usable: torch_npu's device on an
NPU host, opsdk's emulated one elsewhere (see :mod:`opsdk._runtime.device`).
"""

from opsdk._runtime.device import EMULATE_ENV, NpuInfo, ensure_npu

__all__ = ["EMULATE_ENV", "NpuInfo", "ensure_npu"]
