"""Indexing by an index tensor: index_select and gather."""

from __future__ import annotations

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false

from ._checks import check_index_dtype, same_device, wrap_dim


def index_select(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Output of ``torch.index_select(x, dim, index)``: dim ``dim`` becomes ``index.numel()`` long.

    ``index`` is a 0-D or 1-D int32/int64 tensor; a 0-dim ``x`` takes exactly one index.
    Usage: ``return meta.index_select(x, dim, index)``
    """
    d = wrap_dim(dim, x.dim())
    torch._check_index(
        index.dim() <= 1,
        lambda: f"index_select: index must be a vector (0-D or 1-D), got {index.dim()}-D",
    )
    check_index_dtype(index, "index_select")
    same_device((x, index), "index_select")
    if x.dim() == 0:
        torch._check(
            index.numel() == 1,
            lambda: (
                f"index_select: index to a 0-dim tensor can have only 1 value, got {index.numel()}"
            ),
        )
        return x.new_empty(())
    shape = list(x.shape)
    shape[d] = index.numel()
    return x.new_empty(shape)


def gather(x: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """Output of ``torch.gather(x, dim, index)``: shaped like ``index``, ``x``'s dtype.

    As the kernel demands, ``index`` is int32/int64, has ``x``'s rank and is no larger
    than ``x`` in every dim but ``dim``; an empty ``index`` is not checked, as in torch.
    Usage: ``return meta.gather(x, dim, index)``
    """
    d = wrap_dim(dim, x.dim())
    same_device((x, index), "gather")
    if not guard_or_false(index.numel() == 0):
        check_index_dtype(index, "gather")
        torch._check(
            max(index.dim(), 1) == max(x.dim(), 1),
            lambda: (
                f"gather: index must have the same number of dimensions as the input, got "
                f"{index.dim()} and {x.dim()}"
            ),
        )
        for i in range(x.dim()):
            if i != d:
                torch._check(
                    index.shape[i] <= x.shape[i],
                    lambda i=i: (
                        f"gather: size does not match at dimension {i}: expected index "
                        f"{list(index.shape)} to be no larger than input {list(x.shape)} apart "
                        f"from dimension {d}"
                    ),
                )
    return x.new_empty(index.shape)
