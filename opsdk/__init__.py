"""opsdk: write a PyTorch custom op for Ascend NPU and prove it enters the graph.

``opsdk new`` scaffolds an op package, ``opsdk check`` runs its conformance
matrix (eager, opcheck, aot_eager, TorchAir GE, npugraph_ex), on an NPU host or
offline on an emulated npu device.
"""

from opsdk.implement_me import ImplementMe

__version__ = "0.1.0"
__all__ = ["ImplementMe", "__version__"]
