"""Shape and layout kernels: reshape, permute, (un)squeeze, concat, split, broadcast."""

import torch

from opsdk.offline.ge.errors import GeExecutionError
from opsdk.offline.ge.kernels._registry import ints, register, scalar_int, unsupported


@register("Reshape")
def _reshape(node, args):
    if (node.attr("axis", 0), node.attr("num_axes", -1)) != (0, -1):
        unsupported("Reshape of a sub-range of axes (axis/num_axes)")
    return [args[0].reshape(ints(args[1]))]


@register("Transpose")
def _transpose(node, args):
    return [args[0].permute(ints(args[1]))]


@register("ExpandDims")
def _expand_dims(node, args):
    return [args[0].unsqueeze(scalar_int(args[1]))]


@register("Unsqueeze")
def _unsqueeze(node, args):
    x = args[0]
    axes = node.attr("axes", [])
    rank = x.dim() + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = x.unsqueeze(axis)
    return [x]


@register("Squeeze")
def _squeeze(node, args):
    axes = node.attr("axis", [])
    return [args[0].squeeze(tuple(axes)) if axes else args[0].squeeze()]


def _check_n(node, count):
    n = node.attr("N", count)
    if n != count:
        raise GeExecutionError(f"attr N={n} but {count} tensors are given")


@register("ConcatV2")
def _concat_v2(node, args):
    *xs, dim = args
    _check_n(node, len(xs))
    return [torch.cat(xs, scalar_int(dim))]


@register("Concat")
def _concat(node, args):
    dim, *xs = args
    _check_n(node, len(xs))
    return [torch.cat(xs, scalar_int(dim))]


@register("Pack")
def _pack(node, args):
    _check_n(node, len(args))
    return [torch.stack(args, node.attr("axis", 0))]


@register("Split")
def _split(node, args):
    split_dim, x = args
    dim, num = scalar_int(split_dim), node.attr("num_split")
    if x.shape[dim] % num:
        raise GeExecutionError(f"dim {dim} of size {x.shape[dim]} does not split into {num}")
    return list(torch.split(x, x.shape[dim] // num, dim))


@register("SplitV")
def _split_v(node, args):
    x, size_splits, split_dim = args
    sizes, dim = ints(size_splits), scalar_int(split_dim)
    if sizes.count(-1) == 1:  # one size may be left for GE to infer
        sizes[sizes.index(-1)] = x.shape[dim] - (sum(sizes) + 1)
    if len(sizes) != node.attr("num_split"):
        raise GeExecutionError(f"{len(sizes)} split sizes for num_split={node.attr('num_split')}")
    return list(torch.split(x, sizes, dim))


@register("BroadcastTo")
def _broadcast_to(node, args):
    return [torch.broadcast_to(args[0], ints(args[1]))]


@register("Tile")
def _tile(node, args):
    return [args[0].repeat(ints(args[1]))]
