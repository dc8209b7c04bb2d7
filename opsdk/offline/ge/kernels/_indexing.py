"""Indexing kernels: strided slices, slices, gathers and aten-style tensor indexing."""

import torch

from opsdk.offline.ge.errors import GeExecutionError
from opsdk.offline.ge.kernels._registry import ints, register, scalar_int, unsupported


def _strided_slice(node, x, begin, end, axes, strides) -> torch.Tensor:
    """TF/GE StridedSlice: per listed axis begin:end:stride with Python clamping;
    begin_mask/end_mask bits drop a bound, shrink_axis_mask bits index and drop the axis."""
    if node.attr("ellipsis_mask", 0) or node.attr("new_axis_mask", 0):
        unsupported(f"{node.type} with ellipsis_mask/new_axis_mask")
    begin_mask, end_mask = node.attr("begin_mask", 0), node.attr("end_mask", 0)
    shrink_mask = node.attr("shrink_axis_mask", 0)
    index: list = [slice(None)] * x.dim()
    shrunk = []
    for i, axis in enumerate(axes):
        axis %= x.dim()
        step = strides[i] if strides else 1
        if step <= 0:
            unsupported(f"{node.type} with stride {step}")
        if shrink_mask >> i & 1:
            index[axis] = slice(begin[i], begin[i] + 1 if begin[i] != -1 else None)
            shrunk.append(axis)
            continue
        start = None if begin_mask >> i & 1 else begin[i]
        stop = None if end_mask >> i & 1 else end[i]
        index[axis] = slice(start, stop, step)
    y = x[tuple(index)]
    return y.squeeze(tuple(shrunk)) if shrunk else y


@register("StridedSlice")
def _strided_slice_v1(node, args):
    x, begin, end, strides = args
    begin = ints(begin)
    return [_strided_slice(node, x, begin, ints(end), range(len(begin)), ints(strides))]


@register("StridedSliceV2")
def _strided_slice_v2(node, args):
    x, begin, end, axes, strides = args
    begin = ints(begin)
    axes = ints(axes) if axes is not None else range(len(begin))
    strides = ints(strides) if strides is not None else None
    return [_strided_slice(node, x, begin, ints(end), axes, strides)]


@register("Slice")
def _slice(node, args):
    x, offsets, size = args
    index = tuple(
        slice(o, None if s == -1 else o + s) for o, s in zip(ints(offsets), ints(size), strict=True)
    )
    return [x[index]]


def _gather(node, x, indices, axis):
    if node.attr("batch_dims", 0) != 0:
        unsupported(f"{node.type} with batch_dims != 0")
    axis %= x.dim()
    idx = indices.to(torch.int64)
    if node.attr("negative_index_support", False):
        idx = torch.where(idx < 0, idx + x.shape[axis], idx)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= x.shape[axis]):
        raise GeExecutionError(f"index out of range for axis {axis} of size {x.shape[axis]}")
    out = x.index_select(axis, idx.reshape(-1))
    return [out.reshape((*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :]))]


@register("GatherV2")
def _gather_v2(node, args):
    x, indices, axis = args
    return _gather(node, x, indices, scalar_int(axis))


@register("Gather")
def _gather_v1(node, args):
    return _gather(node, args[0], args[1], 0)


@register("IndexByTensor")
def _index_by_tensor(node, args):
    """aten.index semantics: ``indices_mask`` marks the dims the index tensors apply to."""
    x, *indices = args
    mask = node.attr("indices_mask", []) or [1] * len(indices)
    if sum(mask) != len(indices):
        raise GeExecutionError(f"indices_mask {mask} does not match {len(indices)} index tensors")
    pending = iter(indices)
    index = tuple(next(pending) if m else slice(None) for m in mask)
    return [x[index]]
