"""Memory and control kernels: Identity, TensorMove (a copy), Assign (a ref write), NoOp,
and the strided views TorchAir makes of a view of a graph input (AsStrided, ViewCopy)."""

import torch

from opsdk.offline.ge.errors import GeExecutionError
from opsdk.offline.ge.kernels._registry import ints, register, scalar_int


@register("Identity")
def _identity(node, args):
    return [args[0]]


@register("TensorMove")
def _tensor_move(node, args):
    return [args[0].clone(memory_format=torch.contiguous_format)]


@register("Assign")
def _assign(node, args):
    ref, value = args
    if node.attr("validate_shape", True) and ref.shape != value.shape:
        raise GeExecutionError(f"Assign of shape {list(value.shape)} to {list(ref.shape)}")
    ref.copy_(value)
    return [ref]


@register("NoOp")
def _no_op(node, args):
    return []


def _strided(x, size, stride, offset):
    """``x``'s memory (GE tensors are dense, row-major) seen with ``size``, ``stride``
    and ``offset`` in elements, as torch's as_strided sees a contiguous tensor."""
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)
    return flat.as_strided(ints(size), ints(stride), flat.storage_offset() + scalar_int(offset))


@register("AsStrided")
def _as_strided(node, args):
    x, size, stride, offset = args
    return [_strided(x, size, stride, offset).contiguous()]


@register("ViewCopy")
def _view_copy(node, args):
    """Write ``src`` (seen through its own strides) into the strided region of ``dst``, a
    ref input: the output is ``dst`` itself, written."""
    dst, dst_size, dst_stride, dst_offset, src, src_size, src_stride, src_offset = args
    if not dst.is_contiguous():
        dst = dst.contiguous()
    _strided(dst, dst_size, dst_stride, dst_offset).copy_(
        _strided(src, src_size, src_stride, src_offset)
    )
    return [dst]
