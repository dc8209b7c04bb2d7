"""Public: helpers for fake (meta) functions, by op family (see :mod:`opsdk.runtime.meta`)."""

from opsdk.runtime.meta import (
    bmm,
    broadcast_shape,
    cat,
    dynamic_size,
    elementwise,
    gather,
    index_select,
    inplace,
    masked_select,
    matmul,
    mm,
    nonzero,
    reduction,
    same_as,
    stack,
)

__all__ = [
    "bmm",
    "broadcast_shape",
    "cat",
    "dynamic_size",
    "elementwise",
    "gather",
    "index_select",
    "inplace",
    "masked_select",
    "matmul",
    "mm",
    "nonzero",
    "reduction",
    "same_as",
    "stack",
]
