"""Outputs whose size depends on the input's values (nonzero, masked_select, unique, ...).

A fake function never sees values, so such a size is a new unbacked SymInt from the
fake context, bounded by what the data could at most produce.
"""

from __future__ import annotations

import math

import torch

from ._checks import same_device
from ._pointwise import broadcast_shape


def dynamic_size(*, min: int = 0, max: int | torch.SymInt | None = None) -> torch.SymInt:
    """A data-dependent size in ``[min, max]``, for a fake function's output shape.

    ``ctx.new_dynamic_size`` only takes int bounds; ``max`` here may be symbolic too
    (an input's ``numel()`` under dynamic shapes), and is then a ``torch._check``
    constraint that compiled graphs assert at run time. Works only while a function
    registered with ``torch.library.register_fake`` runs: a Meta kernel cannot return
    a data-dependent size.
    Usage: ``n = meta.dynamic_size(max=x.numel())``
    """
    ctx = torch.library.get_ctx()
    if ctx is None:
        raise RuntimeError(
            "opsdk.meta: a data-dependent size needs the fake context; call this from a "
            "function registered with torch.library.register_fake"
        )
    symbolic_max = isinstance(max, torch.SymInt)
    size = ctx.new_dynamic_size(min=min, max=None if symbolic_max else max)
    if symbolic_max:
        torch._check(size <= max, lambda: f"data-dependent size {size} exceeds its bound {max}")
    return size


def nonzero(x: torch.Tensor) -> torch.Tensor:
    """Output of ``torch.nonzero(x)``: ``(n, x.dim())`` int64 indices, ``n <= x.numel()``.

    Contiguous, as every output is (:mod:`opsdk.harness.core.layout`): torch's own kernels
    return it column-major, so an npu kernel calling ``torch.nonzero`` ends with
    ``.contiguous()``.
    Usage: ``return meta.nonzero(x)``
    """
    return x.new_empty((dynamic_size(max=x.numel()), x.dim()), dtype=torch.int64)


def masked_select(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Output of ``torch.masked_select(x, mask)``: 1-D, ``x``'s dtype, one element per true.

    ``mask`` is bool and broadcasts with ``x``; the length is at most their broadcast numel.
    Usage: ``return meta.masked_select(x, mask)``
    """
    torch._check(
        mask.dtype == torch.bool,
        lambda: f"masked_select: expected a bool mask, got {mask.dtype}",
    )
    same_device((x, mask), "masked_select")
    shape = broadcast_shape(x, mask)
    return x.new_empty((dynamic_size(max=math.prod(shape)),))
