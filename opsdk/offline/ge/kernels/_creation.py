"""Creation kernels: tensors made from shapes and values (ZerosLike, Fill, Range, Shape)."""

import torch

from opsdk.offline.ge.kernels._registry import ints, register
from opsdk.offline.ge.proto import torch_dtype_from_ge


@register("ZerosLike")
def _zeros_like(node, args):
    return [torch.zeros_like(args[0], memory_format=torch.contiguous_format)]


@register("OnesLike")
def _ones_like(node, args):
    return [torch.ones_like(args[0], memory_format=torch.contiguous_format)]


@register("Fill")
def _fill(node, args):
    dims, value = args
    return [value.reshape(()).expand(ints(dims)).contiguous()]


@register("Range")
def _range(node, args):
    start, limit, delta = args
    dtype = torch.promote_types(torch.promote_types(start.dtype, limit.dtype), delta.dtype)
    return [
        torch.arange(start.item(), limit.item(), delta.item(), dtype=dtype, device=start.device)
    ]


@register("Shape")
def _shape(node, args):
    dtype = torch_dtype_from_ge(node.attr("dtype", 3))
    return [torch.tensor(list(args[0].shape), dtype=dtype, device=args[0].device)]
