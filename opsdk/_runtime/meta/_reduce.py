"""Reductions over some or all dims (sum, mean, amax, argmax, ...)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ._checks import wrap_dim


def reduction(
    x: torch.Tensor,
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    *,
    dtype: torch.dtype | None = None,
    empty_ok: bool = True,
) -> torch.Tensor:
    """Output of a reduction of ``x`` over ``dim``, with torch's rules for dims and keepdim.

    ``dim`` is one dim, several, or ``None``/empty for all of them (as ``torch.sum``);
    repeated or out-of-range dims are refused. ``keepdim`` keeps reduced dims as size
    1. The result has ``x``'s dtype unless ``dtype`` says otherwise (``torch.int64``
    for arg-reductions, or a sum's accumulation dtype). ``empty_ok=False`` is for
    reductions without an identity (``amax``, ``argmax``): like them, it refuses to
    reduce a dim of size 0.
    Usage: ``return meta.reduction(x, dim, keepdim, dtype=torch.int64, empty_ok=False)``
    """
    if dim is None:
        dim = []
    elif not isinstance(dim, Sequence):
        dim = [dim]
    dims = [wrap_dim(d, x.dim()) for d in dim] if dim else list(range(x.dim()))
    for d in dims:
        torch._check(
            dims.count(d) == 1, lambda d=d: f"dim {d} appears multiple times in the list of dims"
        )
    if x.dim() == 0:  # dim 0 (or -1) of a 0-dim tensor is the tensor itself: nothing to reduce
        return x.new_empty((), dtype=dtype or x.dtype)
    if not empty_ok:
        for d in dims:
            torch._check_index(
                x.shape[d] != 0,
                lambda d=d: f"reduction: expected reduction dim {d} to have non-zero size",
            )
    if keepdim:
        shape = [1 if i in dims else size for i, size in enumerate(x.shape)]
    else:
        shape = [size for i, size in enumerate(x.shape) if i not in dims]
    return x.new_empty(shape, dtype=dtype or x.dtype)
