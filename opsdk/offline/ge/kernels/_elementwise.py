"""Elementwise kernels: unary and binary maps, scaled forms, casts and softmax."""

import torch

from opsdk.offline.ge.kernels._registry import register, unsupported
from opsdk.offline.ge.proto import torch_dtype_from_ge

_UNARY = {
    "Neg": torch.neg,
    "Abs": torch.abs,
    "Sqrt": torch.sqrt,
    "Rsqrt": torch.rsqrt,
    "Relu": torch.relu,
    "Tanh": torch.tanh,
    "Sigmoid": torch.sigmoid,
    "Erf": torch.erf,
    "Sin": torch.sin,
    "Cos": torch.cos,
    "Floor": torch.floor,
    "Ceil": torch.ceil,
    "Round": torch.round,
    "Sign": torch.sign,
    "Reciprocal": torch.reciprocal,
    "LogicalNot": torch.logical_not,
}

_BINARY = {
    "Add": torch.add,
    "Sub": torch.sub,
    "Mul": torch.mul,
    "Maximum": torch.maximum,
    "Minimum": torch.minimum,
    "Pow": torch.pow,
    "FloorDiv": torch.floor_divide,
    "FloorMod": torch.remainder,
    "Less": torch.lt,
    "LessEqual": torch.le,
    "Greater": torch.gt,
    "GreaterEqual": torch.ge,
    "Equal": torch.eq,
    "NotEqual": torch.ne,
    "LogicalAnd": torch.logical_and,
    "LogicalOr": torch.logical_or,
}


def _unary_kernel(fn):
    return lambda node, args: [fn(args[0])]


def _binary_kernel(fn):
    return lambda node, args: [fn(args[0], args[1])]


for _type, _fn in _UNARY.items():
    register(_type)(_unary_kernel(_fn))
for _type, _fn in _BINARY.items():
    register(_type)(_binary_kernel(_fn))


@register("RealDiv", "Div")
def _real_div(node, args):
    x1, x2 = args
    if not (x1.is_floating_point() or x1.is_complex()):
        unsupported(f"{node.type} of {x1.dtype} (integer division semantics)")
    return [torch.div(x1, x2)]


@register("Exp", "Log")
def _exp_log(node, args):
    """y = base^(scale*x + shift) for Exp, log_base(scale*x + shift) for Log; base -1 is e."""
    base, scale, shift = node.attr("base", -1.0), node.attr("scale", 1.0), node.attr("shift", 0.0)
    x = args[0]
    if scale != 1.0 or shift != 0.0:
        x = x * scale + shift
    if node.type == "Exp":
        return [torch.exp(x) if base == -1.0 else torch.pow(base, x)]
    y = torch.log(x)
    return [y if base == -1.0 else y / torch.log(torch.tensor(base, dtype=y.dtype))]


@register("AxpyV2")
def _axpy_v2(node, args):
    x1, x2, alpha = args
    return [x1 + alpha * x2]


@register("Axpy")
def _axpy(node, args):
    return [args[0] + node.attr("alpha") * args[1]]


@register("Muls")
def _muls(node, args):
    return [(args[0] * node.attr("value")).to(args[0].dtype)]


@register("Sxpy")
def _sxpy(node, args):
    """y = x1 - alpha * x2: TorchAir lowers rsub(self, other, alpha) to Sxpy(other, self, alpha)."""
    x1, x2, alpha = (list(args) + [None])[:3]
    return [x1 - x2 if alpha is None else x1 - alpha * x2]


@register("ClipByValueV2")
def _clip_by_value(node, args):
    x, low, high = args
    return [torch.clamp(x, low, high).to(x.dtype)]


@register("LeakyRelu")
def _leaky_relu(node, args):
    return [torch.nn.functional.leaky_relu(args[0], node.attr("negative_slope", 0.0))]


@register("SelectV2")
def _select_v2(node, args):
    return [torch.where(args[0], args[1], args[2])]


@register("Cast")
def _cast(node, args):
    return [args[0].to(torch_dtype_from_ge(node.attr("dst_type")))]


@register("SoftmaxV2")
def _softmax(node, args):
    axes = node.attr("axes", [-1])
    if len(axes) != 1:
        unsupported(f"SoftmaxV2 over {len(axes)} axes")
    dtype = torch.float32 if node.attr("half_to_float", False) else None
    return [torch.softmax(args[0], axes[0], dtype=dtype)]
