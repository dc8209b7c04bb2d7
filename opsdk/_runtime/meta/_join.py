"""Joining tensors: concatenation along an existing dim, stacking along a new one."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.fx.experimental.symbolic_shapes import guard_or_false, sym_eq

from ._checks import same_device, wrap_dim


def cat(tensors: Sequence[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Output of ``torch.cat(tensors, dim)``: sizes add up along ``dim``, dtypes promote.

    Every other dim must match. As in torch, a 1-D tensor of size 0 may join tensors
    of any rank (it is skipped); a symbolic size is never assumed to be that 0.
    Usage: ``return meta.cat(tensors, dim)``
    """
    torch._check_value(len(tensors) > 0, lambda: "cat: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        torch._check(
            t.dim() > 0,
            lambda i=i: f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated",
        )
    like = same_device(tensors, "cat")
    example = next((t for t in tensors if t.dim() != 1), tensors[0])
    d = wrap_dim(dim, example.dim())
    sizes = []
    for i, t in enumerate(tensors):
        if t.dim() != example.dim():
            torch._check(
                t.dim() == 1 and guard_or_false(t.shape[0] == 0),
                lambda i=i, t=t: (
                    f"cat: tensors must have the same number of dimensions: got "
                    f"{example.dim()} and {t.dim()} (tensor number {i} in the list)"
                ),
            )
            continue
        for j in range(t.dim()):
            if j != d:
                torch._check(
                    t.shape[j] == example.shape[j],
                    lambda i=i, j=j, t=t: (
                        f"cat: sizes of tensors must match except in dimension {d}. Expected "
                        f"size {example.shape[j]} but got size {t.shape[j]} for tensor "
                        f"number {i} in the list"
                    ),
                )
        sizes.append(t.shape[d])
    shape = list(example.shape)
    shape[d] = sum(sizes)
    return like.new_empty(shape, dtype=_promoted(tensors))


def stack(tensors: Sequence[torch.Tensor], dim: int = 0) -> torch.Tensor:
    """Output of ``torch.stack(tensors, dim)``: equal shapes joined along a new dim.

    ``dim`` may be one past the last dim; dtypes promote as for :func:`cat`.
    Usage: ``return meta.stack(tensors, dim)``
    """
    torch._check(len(tensors) > 0, lambda: "stack: expected a non-empty list of tensors")
    like = same_device(tensors, "stack")
    for i, t in enumerate(tensors):
        torch._check(
            sym_eq(t.shape, like.shape),
            lambda i=i, t=t: (
                f"stack: expects each tensor to be equal size, but got {list(like.shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            ),
        )
    shape = list(like.shape)
    shape.insert(wrap_dim(dim, like.dim() + 1), len(tensors))
    return like.new_empty(shape, dtype=_promoted(tensors))


def _promoted(tensors):
    # cat refuses 0-dim tensors and stack wants equal shapes, so no operand here is a
    # lower-priority 0-dim one: plain pairwise promotion is torch's result_type.
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = torch.promote_types(result, t.dtype)
    return result
