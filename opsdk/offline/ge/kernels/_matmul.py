"""Matmul kernels: MatMul and BatchMatMul, V1 and V2, with transpose flags and bias."""

import torch

from opsdk.offline.ge.kernels._registry import register, unsupported


def _t(x):
    return x.transpose(-1, -2)


def _matmul(node, x1, x2, bias, offset_w, flags):
    if offset_w is not None or node.attr("offset_x", 0) != 0:
        unsupported(f"{node.type} with offset_w/offset_x (quantized matmul)")
    a = _t(x1) if node.attr(flags[0], False) else x1
    b = _t(x2) if node.attr(flags[1], False) else x2
    y = torch.matmul(a, b)
    return [y + bias if bias is not None else y]


@register("MatMul")
def _mat_mul(node, args):
    x1, x2, bias = (list(args) + [None])[:3]
    return _matmul(node, x1, x2, bias, None, ("transpose_x1", "transpose_x2"))


@register("MatMulV2")
def _mat_mul_v2(node, args):
    x1, x2, bias, offset_w = (list(args) + [None, None])[:4]
    return _matmul(node, x1, x2, bias, offset_w, ("transpose_x1", "transpose_x2"))


@register("BatchMatMul")
def _batch_mat_mul(node, args):
    return _matmul(node, args[0], args[1], None, None, ("adj_x1", "adj_x2"))


@register("BatchMatMulV2")
def _batch_mat_mul_v2(node, args):
    x1, x2, bias, offset_w = (list(args) + [None, None])[:4]
    return _matmul(node, x1, x2, bias, offset_w, ("adj_x1", "adj_x2"))
