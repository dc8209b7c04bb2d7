"""Input checks shared by the helpers, worded like the errors of torch's own kernels."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import torch


def wrap_dim(dim: int | torch.SymInt, ndim: int) -> int:
    """``dim`` as an index in ``[0, ndim)``; a 0-dim tensor accepts ``-1`` and ``0``.

    A symbolic ``dim`` (an int argument under ``dynamic=True``) is specialized: which
    axis an op works on decides the output's structure, so it cannot stay symbolic.
    """
    dim = operator.index(dim)
    span = max(ndim, 1)
    torch._check_index(
        -span <= dim < span,
        lambda: (
            f"Dimension out of range (expected to be in range of [{-span}, {span - 1}], "
            f"but got {dim})"
        ),
    )
    return dim % span


def same_device(tensors: Sequence[torch.Tensor], op: str) -> torch.Tensor:
    """The first of ``tensors`` after checking they all live on its device."""
    first = tensors[0]
    for t in tensors[1:]:
        torch._check(
            t.device == first.device,
            lambda t=t: (
                f"{op}: expected all tensors to be on the same device, but found at least "
                f"two devices, {first.device} and {t.device}"
            ),
        )
    return first


def is_cpu_scalar(t: torch.Tensor) -> bool:
    """A 0-dim CPU tensor: elementwise kernels accept it next to tensors on any device."""
    return t.dim() == 0 and t.device.type == "cpu"


def check_index_dtype(index: torch.Tensor, op: str) -> None:
    torch._check(
        index.dtype in (torch.int32, torch.int64),
        lambda: f"{op}: expected dtype int32 or int64 for index, but got {index.dtype}",
    )
