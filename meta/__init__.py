"""Helpers for fake (meta) functions registered with ``torch.library.register_fake``.

A fake function says what an op returns without computing it: shapes, dtypes,
devices. Getting it wrong is the most common reason a custom op breaks under
``torch.compile``; these helpers cover the usual op families and stay correct
with symbolic (SymInt) shapes, so the same fake works for static and dynamic
graphs.
"""

from __future__ import annotations

import torch

__all__ = ["broadcast_shape", "elementwise", "inplace", "same_as"]


def broadcast_shape(*tensors: torch.Tensor) -> torch.Size:
    """The broadcast of the tensors' shapes; SymInt-safe (uses torch's own rule)."""
    return torch.broadcast_shapes(*(t.shape for t in tensors))


def same_as(x: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """An output shaped like ``x`` (optionally of another dtype), on ``x``'s device."""
    return torch.empty_like(x, dtype=dtype or x.dtype, memory_format=torch.contiguous_format)


def elementwise(*tensors: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Output of an elementwise op: broadcast shape, promoted dtype unless given."""
    if not tensors:
        raise ValueError("elementwise() needs at least one tensor")
    result_dtype = dtype or _promote(tensors)
    return tensors[0].new_empty(broadcast_shape(*tensors), dtype=result_dtype)


def inplace(target: torch.Tensor, *others: torch.Tensor) -> None:
    """Fake of an op that writes ``target`` in place and returns nothing.

    It checks what the real kernel would refuse: ``others`` must broadcast to
    ``target``'s shape without growing it. The op returns nothing, so neither
    does its fake; the mutation itself is declared by ``Tensor(a!)``.
    """
    shape = broadcast_shape(target, *others)
    torch._check(
        shape == target.shape,
        lambda: (
            f"in-place op: inputs broadcast to {tuple(shape)}, which does not fit the "
            f"written tensor of shape {tuple(target.shape)}"
        ),
    )


def _promote(tensors) -> torch.dtype:
    result = tensors[0].dtype
    for t in tensors[1:]:
        result = torch.promote_types(result, t.dtype)
    return result
