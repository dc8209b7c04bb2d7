"""Memory and control kernels: Identity, TensorMove (a copy), Assign (a ref write), NoOp."""

import torch

from opsdk.offline.ge.errors import GeExecutionError
from opsdk.offline.ge.kernels._registry import register


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
