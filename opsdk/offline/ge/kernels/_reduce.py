"""Reduction kernels: ReduceSum, ReduceMean, ReduceMax over listed axes."""

import torch

from opsdk.offline.ge.kernels._registry import ints, register, unsupported

_REDUCTIONS = {
    "ReduceSum": lambda x, dims, keep: torch.sum(x, dims, keepdim=keep),
    "ReduceMean": lambda x, dims, keep: torch.mean(x, dims, keepdim=keep),
    "ReduceMax": lambda x, dims, keep: torch.amax(x, dims, keepdim=keep),
}


@register(*_REDUCTIONS)
def _reduce(node, args):
    x, axes = args
    dims = ints(axes)
    if not dims:
        if x.dim() == 0 or node.attr("noop_with_empty_axes", False):
            return [x]
        unsupported(f"{node.type} with empty axes")
    return [_REDUCTIONS[node.type](x, dims, node.attr("keep_dims", False))]
