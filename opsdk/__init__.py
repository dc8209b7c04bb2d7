"""opsdk: write a PyTorch custom op for Ascend NPU and prove it enters the graph.

``opsdk new`` scaffolds an op package, ``opsdk check`` runs its conformance
matrix (eager, opcheck, aot_eager, TorchAir GE, npugraph_ex), on an NPU host or
offline on an emulated npu device. The input-spec API (``opsdk.Support``,
``opsdk.F32`` ..., ``opsdk.declare_supported``; see :mod:`opsdk.inputs`) is
importable from here, loaded on first use so that ``import opsdk`` (and the CLI)
does not import torch; ``opsdk.__version__`` is read from the installed metadata.
"""

from opsdk._runtime.implement_me import ImplementMe

_INPUTS = (
    "BF16",
    "BOOL",
    "F16",
    "F32",
    "F64",
    "I8",
    "I16",
    "I32",
    "I64",
    "U8",
    "U64",
    "Support",
    "declare_supported",
)
__all__ = ["ImplementMe", "__version__", *_INPUTS]


def __getattr__(name: str):
    if name == "__version__":  # the installed distribution's, so it cannot drift from it
        from opsdk import _versions

        return _versions.opsdk_version()
    if name in _INPUTS:
        from opsdk._runtime import inputs

        return getattr(inputs, name)
    raise AttributeError(f"module 'opsdk' has no attribute {name!r}")
