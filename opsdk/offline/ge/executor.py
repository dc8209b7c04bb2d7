"""A reference executor for GE IR graphs: runs a ``GraphDef`` node by node on tensors.

Offline there is no Graph Engine, so the ``ModelDef`` TorchAir builds is run
here instead: every GE op type gets a small torch kernel with GE's semantics
(inputs by position, attributes by name), and every custom op type registered
in :mod:`opsdk.runtime.irdef` runs through the CPU kernel of the torch op its
``IrDef.torch_op`` names, which is that op's reference implementation.

What the executor promises, as GE does:

- the graph is checked when it is built (edges point at existing outputs, op
  types are known, custom op nodes match their IR definition), so a bad graph
  fails at ``load`` naming the node;
- outputs are fresh contiguous tensors, except that an op output with the same
  name as one of its inputs is a *ref* output (GE's in-place convention): the
  op writes into that input's memory, which TorchAir relies on after removing
  redundant ``TensorMove`` copies;
- an op type it has no kernel for is an error naming the op type and node,
  never a guess;
- it computes on the device its inputs are on (the emulated npu device or CPU),
  custom ops excepted: their reference kernel is the CPU one.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from opsdk.errors import OpFault, SpecError
from opsdk.runtime import irdef, types
from opsdk.runtime import spec as op_spec


class GeGraphError(OpFault):
    """The GE graph is malformed or uses something the executor cannot run."""


class GeExecutionError(OpFault):
    """A node failed while the graph ran (the message names the node)."""


# --- Data types --------------------------------------------------------------------------
# GE has two numberings for the same data types: ge::DataType (C++, also
# torchair.ge.DataType), used by int attrs such as Cast.dst_type, Shape.dtype,
# ``dt`` attrs and TorchAir's output_dtypes; and the protobuf enum
# ge.proto.DataType used by tensor descriptors (Data descs, Const values).
# Both are resolved through the type name.

_TORCH_BY_NAME = {
    "DT_FLOAT": torch.float32,
    "DT_FLOAT16": torch.float16,
    "DT_BF16": torch.bfloat16,
    "DT_DOUBLE": torch.float64,
    "DT_INT8": torch.int8,
    "DT_INT16": torch.int16,
    "DT_INT32": torch.int32,
    "DT_INT64": torch.int64,
    "DT_UINT8": torch.uint8,
    "DT_UINT16": torch.uint16,
    "DT_UINT32": torch.uint32,
    "DT_UINT64": torch.uint64,
    "DT_BOOL": torch.bool,
    "DT_COMPLEX32": torch.complex32,
    "DT_COMPLEX64": torch.complex64,
    "DT_COMPLEX128": torch.complex128,
    "DT_FLOAT8_E5M2": torch.float8_e5m2,
    "DT_FLOAT8_E4M3FN": torch.float8_e4m3fn,
}

# ge::DataType values (graph/types.h), the numbering of torchair.ge.DataType.
_GE_DTYPE_NAMES = {
    0: "DT_FLOAT",
    1: "DT_FLOAT16",
    2: "DT_INT8",
    3: "DT_INT32",
    4: "DT_UINT8",
    6: "DT_INT16",
    7: "DT_UINT16",
    8: "DT_UINT32",
    9: "DT_INT64",
    10: "DT_UINT64",
    11: "DT_DOUBLE",
    12: "DT_BOOL",
    16: "DT_COMPLEX64",
    17: "DT_COMPLEX128",
    27: "DT_BF16",
    33: "DT_COMPLEX32",
    35: "DT_FLOAT8_E5M2",
    36: "DT_FLOAT8_E4M3FN",
}


def torch_dtype_from_ge(value: int) -> torch.dtype:
    """torch dtype of a ge::DataType value (C++ numbering: DT_FLOAT=0, DT_FLOAT16=1...)."""
    name = _GE_DTYPE_NAMES.get(int(value))
    if name is None:
        raise GeGraphError(
            f"GE data type {value} has no torch equivalent in the reference executor"
        )
    return _TORCH_BY_NAME[name]


def torch_dtype_from_proto(desc) -> torch.dtype:
    """torch dtype of a ``TensorDescriptor`` (protobuf numbering: DT_FLOAT=1, DT_FLOAT16=2...)."""
    enum = desc.DESCRIPTOR.fields_by_name["dtype"].enum_type
    value = enum.values_by_number.get(desc.dtype)
    name = value.name if value is not None else str(desc.dtype)
    if name not in _TORCH_BY_NAME:
        raise GeGraphError(
            f"tensor data type {name} has no torch equivalent in the reference executor"
        )
    return _TORCH_BY_NAME[name]


def decode_const(tensor_def) -> torch.Tensor:
    """The value of a ``TensorDef`` (a Const node's ``attr["value"].t``): raw
    little-endian bytes of a contiguous tensor, dtype and shape from its descriptor."""
    dtype = torch_dtype_from_proto(tensor_def.desc)
    shape = [int(d) for d in tensor_def.desc.shape.dim]
    numel = 1
    for d in shape:
        numel *= d
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(tensor_def.data) != numel * itemsize:
        raise GeGraphError(
            f"Const of {dtype} shape {shape} needs {numel * itemsize} bytes, "
            f"holds {len(tensor_def.data)}"
        )
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(tensor_def.data), dtype=dtype).reshape(shape)


# --- Attributes ----------------------------------------------------------------------------

_LIST_FIELDS = {1: "s", 2: "i", 3: "f", 4: "b", 10: "dt"}  # AttrDef.ListValue.ListValueType


def decode_attr(attr):
    """Python value of an ``AttrDef``: int, float, bool, str, torch.dtype or a list of them."""
    kind = attr.WhichOneof("value")
    if kind in ("i", "f", "b"):
        return getattr(attr, kind)
    if kind == "s":
        return attr.s.decode()
    if kind == "dt":
        return torch_dtype_from_ge(attr.dt)
    if kind == "list":
        field = _LIST_FIELDS.get(attr.list.val_type)
        if attr.list.val_type == 0:  # VT_LIST_NONE: an empty list
            return []
        if field is None:
            raise GeGraphError(f"list attr of value type {attr.list.val_type} is not supported")
        values = list(getattr(attr.list, field))
        if field == "s":
            return [v.decode() for v in values]
        if field == "dt":
            return [torch_dtype_from_ge(v) for v in values]
        return values
    if kind == "list_list_int":
        return [list(v.list_i) for v in attr.list_list_int.list_list_i]
    raise GeGraphError(f"attr kind {kind!r} is not supported")


_REQUIRED = object()


class Node:
    """One op of the graph as a kernel sees it: its attributes and identity."""

    def __init__(self, op):
        self.op = op
        self.name = op.name
        self.type = op.type

    def attr(self, name: str, default=_REQUIRED):
        if name not in self.op.attr:
            if default is _REQUIRED:
                raise GeExecutionError(f"required attr {name!r} is missing")
            return default
        return decode_attr(self.op.attr[name])

    @property
    def num_outputs(self) -> int:
        return len(self.op.output_desc)


Kernel = Callable[[Node, list], list]
_KERNELS: dict[str, Kernel] = {}


def _kernel(*op_types: str):
    def register(fn: Kernel) -> Kernel:
        for op_type in op_types:
            _KERNELS[op_type] = fn
        return fn

    return register


def supported_op_types() -> list[str]:
    """The built-in GE op types the executor runs (custom ones: opsdk.irdef)."""
    return sorted(_KERNELS) + sorted(_GRAPH_OPS)


def _ints(t) -> list[int]:
    """A shape/axes/perm operand (an int tensor) as a Python list."""
    return [int(v) for v in torch.as_tensor(t).reshape(-1).tolist()]


def _scalar_int(t) -> int:
    values = _ints(t)
    if len(values) != 1:
        raise GeExecutionError(f"expected a single axis value, got {values}")
    return values[0]


def _unsupported(what: str):
    raise GeExecutionError(f"{what} is not supported by the reference executor")


# --- Elementwise -------------------------------------------------------------------------

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
    _KERNELS[_type] = _unary_kernel(_fn)
for _type, _fn in _BINARY.items():
    _KERNELS[_type] = _binary_kernel(_fn)


@_kernel("RealDiv", "Div")
def _real_div(node, args):
    x1, x2 = args
    if not (x1.is_floating_point() or x1.is_complex()):
        _unsupported(f"{node.type} of {x1.dtype} (integer division semantics)")
    return [torch.div(x1, x2)]


@_kernel("Exp", "Log")
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


@_kernel("AxpyV2")
def _axpy_v2(node, args):
    x1, x2, alpha = args
    return [x1 + alpha * x2]


@_kernel("Axpy")
def _axpy(node, args):
    return [args[0] + node.attr("alpha") * args[1]]


@_kernel("Muls")
def _muls(node, args):
    return [(args[0] * node.attr("value")).to(args[0].dtype)]


@_kernel("Sxpy")
def _sxpy(node, args):
    """y = x1 - alpha * x2: TorchAir lowers rsub(self, other, alpha) to Sxpy(other, self, alpha)."""
    x1, x2, alpha = (list(args) + [None])[:3]
    return [x1 - x2 if alpha is None else x1 - alpha * x2]


@_kernel("ClipByValueV2")
def _clip_by_value(node, args):
    x, low, high = args
    return [torch.clamp(x, low, high).to(x.dtype)]


@_kernel("LeakyRelu")
def _leaky_relu(node, args):
    return [torch.nn.functional.leaky_relu(args[0], node.attr("negative_slope", 0.0))]


@_kernel("SelectV2")
def _select_v2(node, args):
    return [torch.where(args[0], args[1], args[2])]


@_kernel("Cast")
def _cast(node, args):
    return [args[0].to(torch_dtype_from_ge(node.attr("dst_type")))]


@_kernel("SoftmaxV2")
def _softmax(node, args):
    axes = node.attr("axes", [-1])
    if len(axes) != 1:
        _unsupported(f"SoftmaxV2 over {len(axes)} axes")
    dtype = torch.float32 if node.attr("half_to_float", False) else None
    return [torch.softmax(args[0], axes[0], dtype=dtype)]


# --- Creation ------------------------------------------------------------------------------


@_kernel("ZerosLike")
def _zeros_like(node, args):
    return [torch.zeros_like(args[0], memory_format=torch.contiguous_format)]


@_kernel("OnesLike")
def _ones_like(node, args):
    return [torch.ones_like(args[0], memory_format=torch.contiguous_format)]


@_kernel("Fill")
def _fill(node, args):
    dims, value = args
    return [value.reshape(()).expand(_ints(dims)).contiguous()]


@_kernel("Range")
def _range(node, args):
    start, limit, delta = args
    dtype = torch.promote_types(torch.promote_types(start.dtype, limit.dtype), delta.dtype)
    return [
        torch.arange(start.item(), limit.item(), delta.item(), dtype=dtype, device=start.device)
    ]


@_kernel("Shape")
def _shape(node, args):
    dtype = torch_dtype_from_ge(node.attr("dtype", 3))
    return [torch.tensor(list(args[0].shape), dtype=dtype, device=args[0].device)]


# --- Shape and layout ------------------------------------------------------------------------


@_kernel("Reshape")
def _reshape(node, args):
    if (node.attr("axis", 0), node.attr("num_axes", -1)) != (0, -1):
        _unsupported("Reshape of a sub-range of axes (axis/num_axes)")
    return [args[0].reshape(_ints(args[1]))]


@_kernel("Transpose")
def _transpose(node, args):
    return [args[0].permute(_ints(args[1]))]


@_kernel("ExpandDims")
def _expand_dims(node, args):
    return [args[0].unsqueeze(_scalar_int(args[1]))]


@_kernel("Unsqueeze")
def _unsqueeze(node, args):
    x = args[0]
    axes = node.attr("axes", [])
    rank = x.dim() + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = x.unsqueeze(axis)
    return [x]


@_kernel("Squeeze")
def _squeeze(node, args):
    axes = node.attr("axis", [])
    return [args[0].squeeze(tuple(axes)) if axes else args[0].squeeze()]


def _check_n(node, count):
    n = node.attr("N", count)
    if n != count:
        raise GeExecutionError(f"attr N={n} but {count} tensors are given")


@_kernel("ConcatV2")
def _concat_v2(node, args):
    *xs, dim = args
    _check_n(node, len(xs))
    return [torch.cat(xs, _scalar_int(dim))]


@_kernel("Concat")
def _concat(node, args):
    dim, *xs = args
    _check_n(node, len(xs))
    return [torch.cat(xs, _scalar_int(dim))]


@_kernel("Pack")
def _pack(node, args):
    _check_n(node, len(args))
    return [torch.stack(args, node.attr("axis", 0))]


@_kernel("Split")
def _split(node, args):
    split_dim, x = args
    dim, num = _scalar_int(split_dim), node.attr("num_split")
    if x.shape[dim] % num:
        raise GeExecutionError(f"dim {dim} of size {x.shape[dim]} does not split into {num}")
    return list(torch.split(x, x.shape[dim] // num, dim))


@_kernel("SplitV")
def _split_v(node, args):
    x, size_splits, split_dim = args
    sizes, dim = _ints(size_splits), _scalar_int(split_dim)
    if sizes.count(-1) == 1:  # one size may be left for GE to infer
        sizes[sizes.index(-1)] = x.shape[dim] - (sum(sizes) + 1)
    if len(sizes) != node.attr("num_split"):
        raise GeExecutionError(f"{len(sizes)} split sizes for num_split={node.attr('num_split')}")
    return list(torch.split(x, sizes, dim))


def _strided_slice(node, x, begin, end, axes, strides):
    """TF/GE StridedSlice: per listed axis begin:end:stride with Python clamping;
    begin_mask/end_mask bits drop a bound, shrink_axis_mask bits index and drop the axis."""
    if node.attr("ellipsis_mask", 0) or node.attr("new_axis_mask", 0):
        _unsupported(f"{node.type} with ellipsis_mask/new_axis_mask")
    begin_mask, end_mask = node.attr("begin_mask", 0), node.attr("end_mask", 0)
    shrink_mask = node.attr("shrink_axis_mask", 0)
    index: list = [slice(None)] * x.dim()
    shrunk = []
    for i, axis in enumerate(axes):
        axis %= x.dim()
        step = strides[i] if strides else 1
        if step <= 0:
            _unsupported(f"{node.type} with stride {step}")
        if shrink_mask >> i & 1:
            index[axis] = slice(begin[i], begin[i] + 1 if begin[i] != -1 else None)
            shrunk.append(axis)
            continue
        start = None if begin_mask >> i & 1 else begin[i]
        stop = None if end_mask >> i & 1 else end[i]
        index[axis] = slice(start, stop, step)
    y = x[tuple(index)]
    return y.squeeze(tuple(shrunk)) if shrunk else y


@_kernel("StridedSlice")
def _strided_slice_v1(node, args):
    x, begin, end, strides = args
    begin = _ints(begin)
    return [_strided_slice(node, x, begin, _ints(end), range(len(begin)), _ints(strides))]


@_kernel("StridedSliceV2")
def _strided_slice_v2(node, args):
    x, begin, end, axes, strides = args
    begin = _ints(begin)
    axes = _ints(axes) if axes is not None else range(len(begin))
    strides = _ints(strides) if strides is not None else None
    return [_strided_slice(node, x, begin, _ints(end), axes, strides)]


@_kernel("Slice")
def _slice(node, args):
    x, offsets, size = args
    index = tuple(
        slice(o, None if s == -1 else o + s)
        for o, s in zip(_ints(offsets), _ints(size), strict=True)
    )
    return [x[index]]


@_kernel("BroadcastTo")
def _broadcast_to(node, args):
    return [torch.broadcast_to(args[0], _ints(args[1]))]


@_kernel("Tile")
def _tile(node, args):
    return [args[0].repeat(_ints(args[1]))]


def _gather(node, x, indices, axis):
    if node.attr("batch_dims", 0) != 0:
        _unsupported(f"{node.type} with batch_dims != 0")
    axis %= x.dim()
    idx = indices.to(torch.int64)
    if node.attr("negative_index_support", False):
        idx = torch.where(idx < 0, idx + x.shape[axis], idx)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= x.shape[axis]):
        raise GeExecutionError(f"index out of range for axis {axis} of size {x.shape[axis]}")
    out = x.index_select(axis, idx.reshape(-1))
    return [out.reshape((*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :]))]


@_kernel("GatherV2")
def _gather_v2(node, args):
    x, indices, axis = args
    return _gather(node, x, indices, _scalar_int(axis))


@_kernel("Gather")
def _gather_v1(node, args):
    return _gather(node, args[0], args[1], 0)


@_kernel("IndexByTensor")
def _index_by_tensor(node, args):
    """aten.index semantics: ``indices_mask`` marks the dims the index tensors apply to."""
    x, *indices = args
    mask = node.attr("indices_mask", []) or [1] * len(indices)
    if sum(mask) != len(indices):
        raise GeExecutionError(f"indices_mask {mask} does not match {len(indices)} index tensors")
    pending = iter(indices)
    index = tuple(next(pending) if m else slice(None) for m in mask)
    return [x[index]]


# --- Matmul and reductions -----------------------------------------------------------------


def _t(x):
    return x.transpose(-1, -2)


def _matmul(node, x1, x2, bias, offset_w, flags):
    if offset_w is not None or node.attr("offset_x", 0) != 0:
        _unsupported(f"{node.type} with offset_w/offset_x (quantized matmul)")
    a = _t(x1) if node.attr(flags[0], False) else x1
    b = _t(x2) if node.attr(flags[1], False) else x2
    y = torch.matmul(a, b)
    return [y + bias if bias is not None else y]


@_kernel("MatMul")
def _mat_mul(node, args):
    x1, x2, bias = (list(args) + [None])[:3]
    return _matmul(node, x1, x2, bias, None, ("transpose_x1", "transpose_x2"))


@_kernel("MatMulV2")
def _mat_mul_v2(node, args):
    x1, x2, bias, offset_w = (list(args) + [None, None])[:4]
    return _matmul(node, x1, x2, bias, offset_w, ("transpose_x1", "transpose_x2"))


@_kernel("BatchMatMul")
def _batch_mat_mul(node, args):
    return _matmul(node, args[0], args[1], None, None, ("adj_x1", "adj_x2"))


@_kernel("BatchMatMulV2")
def _batch_mat_mul_v2(node, args):
    x1, x2, bias, offset_w = (list(args) + [None, None])[:4]
    return _matmul(node, x1, x2, bias, offset_w, ("adj_x1", "adj_x2"))


_REDUCTIONS = {
    "ReduceSum": lambda x, dims, keep: torch.sum(x, dims, keepdim=keep),
    "ReduceMean": lambda x, dims, keep: torch.mean(x, dims, keepdim=keep),
    "ReduceMax": lambda x, dims, keep: torch.amax(x, dims, keepdim=keep),
}


@_kernel(*_REDUCTIONS)
def _reduce(node, args):
    x, axes = args
    dims = _ints(axes)
    if not dims:
        if x.dim() == 0 or node.attr("noop_with_empty_axes", False):
            return [x]
        _unsupported(f"{node.type} with empty axes")
    return [_REDUCTIONS[node.type](x, dims, node.attr("keep_dims", False))]


# --- Memory and control ------------------------------------------------------------------------


@_kernel("Identity")
def _identity(node, args):
    return [args[0]]


@_kernel("TensorMove")
def _tensor_move(node, args):
    return [args[0].clone(memory_format=torch.contiguous_format)]


@_kernel("Assign")
def _assign(node, args):
    ref, value = args
    if node.attr("validate_shape", True) and ref.shape != value.shape:
        raise GeExecutionError(f"Assign of shape {list(value.shape)} to {list(ref.shape)}")
    ref.copy_(value)
    return [ref]


@_kernel("NoOp")
def _no_op(node, args):
    return []


# --- Custom ops --------------------------------------------------------------------------------


def _resolve_torch_op(ir: irdef.IrDef):
    if not ir.torch_op:
        raise GeGraphError(
            f"IrDef {ir.op_type} names no torch_op, so the reference executor cannot run it"
        )
    try:
        return op_spec.resolve(ir.torch_op)
    except SpecError as err:
        raise GeGraphError(f"IrDef {ir.op_type}: {err}") from None


def _check_attr_type(ir: irdef.IrDef, name: str, attr) -> None:
    """GE refuses a node whose attr is set with another type than the IR declares."""
    declared = next(a.type for a in ir.attrs if a.name == name)
    got = attr.WhichOneof("value")
    if got != types.BY_VALUE_TYPE[declared].attr_field:
        raise GeGraphError(
            f"attr {name!r} of {ir.op_type} is declared {declared} in the IR but set as "
            f"{got!r}; use the matching ge.attr builder in the converter"
        )


class _CustomOp:
    """Runs a custom op node through its torch op's CPU kernel.

    IR inputs and attrs are bound to the torch op's arguments by name; IR outputs
    are, in IR order, the mutated argument of the same name (a GE ref output,
    written into the node's input) or else the op's next return value.
    """

    def __init__(self, op, ir: irdef.IrDef, data_inputs: int):
        self.ir = ir
        self.torch_op = _resolve_torch_op(ir)
        names = [d.name for d in op.input_desc]
        if len(names) != data_inputs:
            raise GeGraphError(f"{data_inputs} inputs but {len(names)} input descriptions")
        self.inputs = {}  # IR input name -> input position(s)
        for spec in ir.inputs:
            if spec.kind == "dynamic":
                positions = []
                while f"{spec.name}{len(positions)}" in names:
                    positions.append(names.index(f"{spec.name}{len(positions)}"))
                self.inputs[spec.name] = positions
            elif spec.name in names:
                self.inputs[spec.name] = names.index(spec.name)
            elif spec.kind == "required":
                raise GeGraphError(f"required input {spec.name!r} of {ir.op_type} is missing")
            else:
                self.inputs[spec.name] = None
        bound = set()
        for where in self.inputs.values():
            bound.update(where if isinstance(where, list) else [] if where is None else [where])
        extra = [n for i, n in enumerate(names) if i not in bound]
        if extra:
            raise GeGraphError(f"inputs {extra} are not in the IR definition of {ir.op_type}")
        # Attrs outside the IR are kept, not refused: GE carries extra node attrs
        # (TorchAir's scope and nn_module_stack attrs) on any op.
        self._bind_schema(op, {a.name for a in ir.attrs})
        self._bind_outputs(op)

    def _bind_schema(self, op, ir_attrs):
        self.spec = op_spec.of(self.torch_op)
        self.args = []  # (torch arg name, "input"|"attr")
        arg_names = {a.name for a in self.spec.args}
        for name in self.inputs:
            if name not in arg_names:
                raise GeGraphError(
                    f"IR input {name!r} of {self.ir.op_type} "
                    f"is not an argument of {self.ir.torch_op}"
                )
        for arg in self.spec.args:
            if arg.name in self.inputs:
                self.args.append((arg.name, "input"))
            elif arg.name in ir_attrs:
                if arg.name in op.attr:
                    _check_attr_type(self.ir, arg.name, op.attr[arg.name])
                    self.args.append((arg.name, "attr"))
                elif arg.is_optional:
                    self.args.append((arg.name, "unset"))  # GE has no None: unset means None
                elif not arg.has_default:
                    raise GeGraphError(
                        f"attr {arg.name!r} (no default in {self.ir.torch_op}) is not set"
                    )
            elif not arg.has_default:
                raise GeGraphError(
                    f"argument {arg.name!r} of {self.ir.torch_op} is neither an IR input nor an IR "
                    f"attr of {self.ir.op_type}"
                )
        self.mutated = {a.name for a in self.spec.mutated_args}
        # SymInt inputs arrive as int64 tensors: name -> whether it is a SymInt[] (else one).
        self.ints = {
            a.name: types.base(a.type).endswith("[]") for a in self.spec.args if not a.is_tensor
        }

    def _bind_outputs(self, op):
        names = [d.name for d in op.output_desc]
        self.outputs = []  # ("mutated", arg name) | ("return", index, dynamic count or None)
        expected = []
        returns = 0
        for spec in self.ir.outputs:
            if spec.name in self.mutated:
                self.outputs.append(("mutated", spec.name))
                expected.append(spec.name)
                continue
            count = None
            if spec.kind == "dynamic":
                count = 0
                while f"{spec.name}{count}" in names:
                    count += 1
                expected.extend(f"{spec.name}{i}" for i in range(count))
            else:
                expected.append(spec.name)
            self.outputs.append(("return", returns, count))
            returns += 1
        n_returns = len(self.spec.returns)
        if returns != n_returns:
            raise GeGraphError(
                f"{self.ir.op_type} declares {returns} outputs besides in-place ones, "
                f"{self.ir.torch_op} returns {n_returns}"
            )
        if names != expected:
            raise GeGraphError(f"outputs {names} do not match the IR definition's {expected}")

    def __call__(self, node: Node, args: list) -> list:
        kwargs = {}
        written_back = {}
        for name, kind in self.args:
            if kind == "attr":
                kwargs[name] = node.attr(name)
                continue
            if kind == "unset":
                kwargs[name] = None
                continue
            where = self.inputs[name]
            if where is None:
                kwargs[name] = None
            elif isinstance(where, list):
                kwargs[name] = [_on_cpu(args[i]) for i in where]
            elif name in self.ints:
                values = args[where].reshape(-1).tolist()
                kwargs[name] = values if self.ints[name] else values[0]
            else:
                kwargs[name] = _on_cpu(args[where])
                if name in self.mutated and kwargs[name] is not args[where]:
                    written_back[name] = args[where]
        result = self.torch_op(**kwargs)
        for name, target in written_back.items():
            target.copy_(kwargs[name])
        # One return comes back bare (a tensor, or a list for Tensor[]); several as a tuple.
        returns = list(result) if len(self.spec.returns) > 1 else [result]
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
        outputs = []
        for entry in self.outputs:
            if entry[0] == "mutated":
                name = entry[1]
                outputs.append(written_back.get(name, kwargs[name]))
                continue
            value = returns[entry[1]]
            values = list(value) if entry[2] is not None else [value]
            if entry[2] is not None and len(values) != entry[2]:
                raise GeExecutionError(f"returned {len(values)} tensors for {entry[2]} outputs")
            outputs.extend(v.to(device) for v in values)
        return outputs


def _on_cpu(t):
    """Custom ops run their CPU reference kernel whatever device the graph runs on."""
    return t.cpu() if isinstance(t, torch.Tensor) else t


# --- The graph -----------------------------------------------------------------------------------

_GRAPH_OPS = {"Data", "RefData", "Const", "NetOutput"}


@dataclass
class _Step:
    node: Node
    inputs: list  # (producer name, output index) | None for an absent optional input
    run: Kernel | None


def _parse_edge(ref: str, node_name: str):
    """'name:idx' -> (name, idx); '' -> None (absent optional input)."""
    if ref == "":
        return None
    name, sep, index = ref.rpartition(":")
    if not sep or not index.lstrip("-").isdigit():
        raise GeGraphError(f"node {node_name}: malformed input {ref!r}")
    return name, int(index)


class GeGraphExecutor:
    """Executes one GE ``GraphDef``. Construction validates the graph; :meth:`run`
    takes the inputs in ``Data`` index order and returns the ``NetOutput`` values."""

    def __init__(self, graph):
        self.graph = graph
        self.name = graph.name
        ops = list(graph.op)
        by_name = {}
        for op in ops:
            if op.name in by_name:
                raise GeGraphError(f"graph {self.name}: two nodes are named {op.name}")
            by_name[op.name] = op
        outputs = [op for op in ops if op.type == "NetOutput"]
        if len(outputs) != 1:
            raise GeGraphError(
                f"graph {self.name}: expected one NetOutput node, found {len(outputs)}"
            )
        self._data = self._index_data(ops)
        self._consts: dict[str, torch.Tensor] = {}  # Const node name -> value (on CPU)
        self._const_copies: dict[tuple[str, torch.device], torch.Tensor] = {}
        steps, deps = {}, {}
        for op in ops:
            try:
                steps[op.name], deps[op.name] = self._bind(op, by_name)
            except (GeGraphError, GeExecutionError) as err:
                raise GeGraphError(
                    f"graph {self.name}: node {op.name} ({op.type}): {err}"
                ) from None
        self._steps = [steps[name] for name in self._order(ops, deps)]
        self._output = steps[outputs[0].name]

    def _index_data(self, ops):
        data = {}
        for op in ops:
            if op.type not in ("Data", "RefData"):
                continue
            index = op.attr["index"].i if "index" in op.attr else -1
            if index in data or index < 0:
                raise GeGraphError(
                    f"graph {self.name}: Data node {op.name} has a bad or repeated index {index}"
                )
            data[index] = op
        if sorted(data) != list(range(len(data))):
            raise GeGraphError(
                f"graph {self.name}: Data indices {sorted(data)} are not 0..{len(data) - 1}"
            )
        return [data[i] for i in range(len(data))]

    def _bind(self, op, by_name):
        inputs, deps = [], set()
        for ref in op.input:
            edge = _parse_edge(ref, op.name)
            if edge is None:
                inputs.append(None)
                continue
            producer, index = edge
            if producer not in by_name:
                raise GeGraphError(f"input {ref!r} refers to no node")
            deps.add(producer)
            if index == -1:
                continue  # control edge: ordering only
            produced = _output_count(by_name[producer])
            if not 0 <= index < produced:
                raise GeGraphError(f"input {ref!r}: {producer} has {produced} outputs")
            inputs.append((producer, index))
        if op.type == "Const":
            if "value" not in op.attr:
                raise GeGraphError("Const without a value")
            self._consts[op.name] = decode_const(op.attr["value"].t)
            return _Step(Node(op), inputs, None), deps
        if op.type in _GRAPH_OPS:
            return _Step(Node(op), inputs, None), deps
        kernel = _KERNELS.get(op.type)
        if kernel is None:
            ir = irdef.lookup(op.type)
            if ir is None:
                raise GeGraphError(
                    f"GE op type {op.type} is unknown: neither a built-in op of the reference "
                    "executor nor a custom op registered in opsdk.irdef"
                )
            kernel = _CustomOp(op, ir, len(inputs))
        return _Step(Node(op), inputs, kernel), deps

    def _order(self, ops, deps):
        """Topological order over data and control edges, stable in graph order."""
        position = {op.name: i for i, op in enumerate(ops)}
        users = {op.name: [] for op in ops}
        pending = {}
        for name, producers in deps.items():
            pending[name] = len(producers)
            for p in producers:
                users[p].append(name)
        ready = [position[n] for n, count in pending.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            name = ops[heapq.heappop(ready)].name
            order.append(name)
            for user in users[name]:
                pending[user] -= 1
                if pending[user] == 0:
                    heapq.heappush(ready, position[user])
        if len(order) != len(ops):
            stuck = sorted(set(pending) - set(order))
            raise GeGraphError(f"graph {self.name}: cycle through nodes {stuck}")
        return order

    def run(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Run on the device of the graph's device inputs (CPU if there are none): host
        inputs and constants are moved there, as GE copies host data to the device."""
        given, inputs = inputs, self._check_inputs(inputs)
        device = next((t.device for t in inputs if t.device.type != "cpu"), torch.device("cpu"))
        inputs = [t.to(device) for t in inputs]
        values: dict[tuple[str, int], torch.Tensor] = {}
        with torch.no_grad():
            for step in self._steps:
                node = step.node
                if node.type == "NetOutput":
                    continue
                args = [values[edge] if edge is not None else None for edge in step.inputs]
                try:
                    outputs = self._run_step(step, args, inputs, device)
                except (GeGraphError, GeExecutionError) as err:
                    raise GeExecutionError(
                        f"graph {self.name}: node {node.name} ({node.type}) failed: {err}"
                    ) from None
                except Exception as err:
                    raise GeExecutionError(
                        f"graph {self.name}: node {node.name} ({node.type}) failed: "
                        f"{type(err).__name__}: {err}"
                    ) from err
                for i, value in enumerate(outputs):
                    values[(node.name, i)] = value
            results = [values[edge] for edge in self._output.inputs if edge is not None]
            return self._fresh(results, given)

    def _run_step(self, step, args, inputs, device):
        node = step.node
        if node.type in ("Data", "RefData"):
            return [inputs[node.op.attr["index"].i]]
        if node.type == "Const":
            return [self._const_on(node.name, device)]
        outputs = step.run(node, args)
        if len(outputs) != node.num_outputs:
            raise GeExecutionError(
                f"produced {len(outputs)} outputs, the node declares {node.num_outputs}"
            )
        return outputs

    def _const_on(self, name: str, device: torch.device) -> torch.Tensor:
        value = self._consts[name]
        if device.type == "cpu":
            return value
        key = (name, device)
        if key not in self._const_copies:
            self._const_copies[key] = value.to(device)
        return self._const_copies[key]

    def _fresh(self, results, inputs):
        """GE hands back outputs in their own contiguous memory, never a graph input's
        or a constant's."""
        kept = [*self._consts.values(), *self._const_copies.values(), *inputs]
        owned = {t.untyped_storage().data_ptr() for t in kept if t.numel()}
        fresh = []
        for t in results:
            t = t.contiguous()
            if t.numel() and t.untyped_storage().data_ptr() in owned:
                t = t.clone()
            fresh.append(t)
        return fresh

    def _check_inputs(self, inputs) -> list:
        """Inputs as the Data nodes declare them. TorchAir passes a SymInt as a
        one-element int64 tensor of shape [1] for a scalar (shape []) Data node, which
        GE takes as that scalar; any other disagreement is an error."""
        if len(inputs) != len(self._data):
            raise GeExecutionError(
                f"graph {self.name}: {len(inputs)} inputs for {len(self._data)} Data nodes"
            )
        checked = []
        for index, (op, tensor) in enumerate(zip(self._data, inputs, strict=True)):
            desc = op.output_desc[0] if op.output_desc else None
            if desc is None:
                checked.append(tensor)
                continue
            dims = list(desc.shape.dim)
            want = torch_dtype_from_proto(desc) if desc.dtype else None
            if dims == [] and tensor.dim() == 1 and tensor.numel() == 1:
                tensor = tensor.reshape(())
            shape_ok = dims == [-2] or (
                len(dims) == tensor.dim()
                and all(d in (-1, s) for d, s in zip(dims, tensor.shape, strict=True))
            )
            if (want is not None and tensor.dtype != want) or not shape_ok:
                raise GeExecutionError(
                    f"graph {self.name}: input {index} ({op.name}) is "
                    f"{tensor.dtype}{list(tensor.shape)}, the Data node expects {want}{dims}"
                )
            checked.append(tensor)
        return checked


def _output_count(op) -> int:
    if op.type in ("Data", "RefData", "Const"):
        return 1
    return len(op.output_desc)
