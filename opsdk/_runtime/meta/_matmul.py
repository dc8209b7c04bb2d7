"""Matrix products: mm, bmm and broadcasting matmul, with optional transposed operands."""

from __future__ import annotations

import torch

from ._checks import same_device


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Output of ``torch.matmul(a, b)``: 1-D operands, broadcast batch dims and all.

    ``transpose_a``/``transpose_b`` say the kernel reads that operand with its last two
    dims swapped (an op attr such as ``bool trans_b``), as ``torch.matmul(a, b.mT)``.
    The reduction dims must agree. Without ``dtype`` the operands must share a dtype,
    which the result has; with it (quantized or mixed-precision products) the result
    has ``dtype`` and the operands may differ.
    Usage: ``return meta.matmul(x, weight, transpose_b=trans_b)``
    """
    return _product("matmul", a, b, transpose_a, transpose_b, dtype)


def mm(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Output of ``torch.mm``: like :func:`matmul`, for 2-D operands only, as the kernel demands.

    Usage: ``return meta.mm(a, b)``
    """
    _check_rank("mm", "a", a, 2)
    _check_rank("mm", "b", b, 2)
    return _product("mm", a, b, transpose_a, transpose_b, dtype)


def bmm(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """Output of ``torch.bmm``: 3-D operands with the same batch size, not broadcast.

    Usage: ``return meta.bmm(a, b, transpose_b=True)``
    """
    _check_rank("bmm", "a", a, 3)
    _check_rank("bmm", "b", b, 3)
    torch._check(
        a.shape[0] == b.shape[0],
        lambda: f"bmm: a and b must have the same batch size, got {a.shape[0]} and {b.shape[0]}",
    )
    return _product("bmm", a, b, transpose_a, transpose_b, dtype)


def _check_rank(op, name, t, rank):
    torch._check(t.dim() == rank, lambda: f"{op}: {name} must be {rank}-D, got {t.dim()}-D")


def _product(op, a, b, transpose_a, transpose_b, dtype):
    torch._check(
        a.dim() >= 1 and b.dim() >= 1,
        lambda: f"{op}: both operands must be at least 1-D, but are {a.dim()}-D and {b.dim()}-D",
    )
    same_device((a, b), op)
    if dtype is None:
        torch._check(
            a.dtype == b.dtype,
            lambda: f"{op}: expected a and b to have the same dtype, got {a.dtype} and {b.dtype}",
        )
    a_shape = _operand_shape(op, "a", a, transpose_a)
    b_shape = _operand_shape(op, "b", b, transpose_b)
    k_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    torch._check(
        a_shape[-1] == k_b,
        lambda: (
            f"{op}: a and b shapes cannot be multiplied ({list(a_shape)} and {list(b_shape)}"
            f"{' as read, after the requested transposes' if transpose_a or transpose_b else ''})"
        ),
    )
    batch = torch.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    rows = a_shape[-2:-1]  # empty for a 1-D a, whose added dim is dropped again
    cols = b_shape[-1:] if len(b_shape) > 1 else []
    return a.new_empty([*batch, *rows, *cols], dtype=dtype or a.dtype)


def _operand_shape(op, name, t, transpose):
    shape = list(t.shape)
    if transpose:
        torch._check(
            t.dim() >= 2,
            lambda: f"{op}: transpose_{name} needs at least 2 dims, but {name} is {t.dim()}-D",
        )
        shape[-2], shape[-1] = shape[-1], shape[-2]
    return shape
