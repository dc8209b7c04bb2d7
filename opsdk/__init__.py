"""opsdk: write a PyTorch custom op for Ascend NPU and prove it enters the graph.

``opsdk new`` scaffolds an op package, ``opsdk check`` runs its conformance
matrix (eager, opcheck, aot_eager, TorchAir GE, npugraph_ex), on an NPU host or
offline on an emulated npu device. The input-spec API (``opsdk.Support``,
``opsdk.F32`` ..., ``opsdk.declare_supported``; see :mod:`opsdk.inputs`) is
importable from here, loaded on first use so that ``import opsdk`` (and the CLI)
does not import torch.
"""

from opsdk.runtime.implement_me import ImplementMe

__version__ = "0.1.0"
_INPUTS = ("BF16", "BOOL", "F16", "F32", "I8", "I32", "I64", "Support", "declare_supported")
__all__ = ["ImplementMe", "__version__", *_INPUTS]


def __getattr__(name: str):
    if name in _INPUTS:
        from opsdk.runtime import inputs

        return getattr(inputs, name)
    raise AttributeError(f"module 'opsdk' has no attribute {name!r}")
