"""Public: input specs, the inputs an op supports (``declare_supported`` in ``specs.py``)."""

from opsdk.runtime.inputs import (
    BF16,
    BOOL,
    F16,
    F32,
    I8,
    I32,
    I64,
    Declaration,
    Support,
    TensorSpec,
    declare_supported,
    declared,
)

__all__ = [
    "BF16",
    "BOOL",
    "F16",
    "F32",
    "I8",
    "I32",
    "I64",
    "Declaration",
    "Support",
    "TensorSpec",
    "declare_supported",
    "declared",
]
