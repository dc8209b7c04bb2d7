"""Same-as-input, elementwise (broadcasting, type promotion) and in-place ops."""

from __future__ import annotations

from numbers import Number

import torch
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

from ._checks import is_cpu_scalar, same_device

# The result-dtype rules of torch's elementwise ops, by the name a fake function passes.
_PROMOTIONS = {
    "default": ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT,  # add, mul, where
    "int_to_float": ELEMENTWISE_TYPE_PROMOTION_KIND.INT_TO_FLOAT,  # div, sqrt, sigmoid
    "complex_to_float": ELEMENTWISE_TYPE_PROMOTION_KIND.COMPLEX_TO_FLOAT,  # abs
    "bool_to_long": ELEMENTWISE_TYPE_PROMOTION_KIND.BOOL_TO_LONG,  # pow
    "always_bool": ELEMENTWISE_TYPE_PROMOTION_KIND.ALWAYS_BOOL,  # eq, lt, isnan
}


def broadcast_shape(*tensors: torch.Tensor) -> torch.Size:
    """The broadcast of the tensors' shapes, by torch's own rule, so SymInt sizes stay symbolic.

    Usage: ``shape = meta.broadcast_shape(x, y)``
    """
    return torch.broadcast_shapes(*(t.shape for t in tensors))


def same_as(x: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    """An output shaped like ``x`` (optionally of another dtype), contiguous, on ``x``'s device.

    For ops whose output mirrors one input (activations, normalizations, casts).
    Usage: ``return meta.same_as(x)``
    """
    return torch.empty_like(x, dtype=dtype or x.dtype, memory_format=torch.contiguous_format)


def elementwise(
    *operands: torch.Tensor | Number | torch.SymInt | torch.SymFloat,
    dtype: torch.dtype | None = None,
    promotion: str = "default",
) -> torch.Tensor:
    """Output of an elementwise op: the broadcast shape and the dtype torch would give it.

    Operands are tensors or Python scalars (a schema's ``Scalar``), promoted the way
    torch promotes them: a 0-dim tensor or a scalar does not widen a tensor of the
    same category (``float16 tensor + float32 0-dim tensor`` is ``float16``).
    ``promotion`` names torch's rule for the op's result dtype: ``default``,
    ``int_to_float``, ``complex_to_float``, ``bool_to_long`` or ``always_bool``;
    ``dtype``, when given, is the result dtype instead. Tensors must share a device,
    except 0-dim CPU tensors, as for torch's elementwise kernels.
    Usage: ``return meta.elementwise(x, y)``
    """
    tensors = [o for o in operands if isinstance(o, torch.Tensor)]
    if not tensors:
        raise ValueError("elementwise() needs at least one tensor")
    if promotion not in _PROMOTIONS:
        raise ValueError(f"elementwise(): promotion must be one of {sorted(_PROMOTIONS)}")
    placed = [t for t in tensors if not is_cpu_scalar(t)] or tensors
    like = same_device(placed, "elementwise")
    kind = _PROMOTIONS[promotion]
    result_dtype = dtype or elementwise_dtypes(*operands, type_promotion_kind=kind)[1]
    return like.new_empty(broadcast_shape(*tensors), dtype=result_dtype)


def inplace(target: torch.Tensor, *others: torch.Tensor) -> None:
    """Fake of an op that writes ``target`` in place and returns nothing.

    It checks what the real kernel would refuse: ``others`` must broadcast to
    ``target``'s shape without growing it, and live on its device (or be 0-dim CPU
    tensors). The op returns nothing, so neither does its fake; the mutation itself
    is declared by ``Tensor(a!)``.
    Usage: ``meta.inplace(x, y)``
    """
    for other in others:
        torch._check(
            other.device == target.device or is_cpu_scalar(other),
            lambda other=other: (
                f"in-place op: an input on device {other.device} cannot be written into a "
                f"tensor on device {target.device}"
            ),
        )
    shape = broadcast_shape(target, *others)
    torch._check(
        shape == target.shape,
        lambda: (
            f"in-place op: inputs broadcast to {tuple(shape)}, which does not fit the "
            f"written tensor of shape {tuple(target.shape)}"
        ),
    )
