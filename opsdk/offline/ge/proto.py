"""GE protobuf values as torch ones: data types, Const tensors and node attributes."""

from __future__ import annotations

import torch

from opsdk._runtime import types
from opsdk.offline.ge.errors import GeGraphError

# The graph's own nodes (its inputs, constants and outputs): GE places them, no op
# library defines them (a repository's stub REG_OP(Data) declares the input x that
# TorchAir's graph inputs have no use for).
GRAPH_OPS = frozenset({"Data", "RefData", "Const", "NetOutput"})

# --- Data types --------------------------------------------------------------------------
# GE has two numberings for the same data types: ge::DataType (C++, also
# torchair.ge.DataType), used by int attrs such as Cast.dst_type, Shape.dtype,
# ``dt`` attrs and TorchAir's output_dtypes; and the protobuf enum
# ge.proto.DataType used by tensor descriptors (Data descs, Const values).
# Both are resolved through the type name, read from opsdk's one dtype table (types.DTYPES);
# the reference executor runs the types that hold plain values (not quantized qint8...).
_TORCH_BY_NAME = {
    d.ge: getattr(torch, d.torch)
    for d in types.DTYPES.values()
    if d.torch and not d.torch.startswith("q") and hasattr(torch, d.torch)
}
_GE_DTYPE_NAMES = {d.value: d.ge for d in types.DTYPES.values() if d.ge in _TORCH_BY_NAME}


def torch_dtype_from_ge(value: int) -> torch.dtype:
    """torch dtype of a ge::DataType value (C++ numbering: DT_FLOAT=0, DT_FLOAT16=1...)."""
    name = _GE_DTYPE_NAMES.get(int(value))
    if name is None:
        raise GeGraphError(
            f"GE data type {value} has no torch equivalent in the reference executor"
        )
    return _TORCH_BY_NAME[name]


def dtype_name(desc) -> str | None:
    """The GE ``DataType`` name of a ``TensorDescriptor``'s dtype (protobuf numbering:
    DT_FLOAT=1, DT_FLOAT16=2...), None for a number the enum does not name."""
    enum = desc.DESCRIPTOR.fields_by_name["dtype"].enum_type
    value = enum.values_by_number.get(desc.dtype)
    return value.name if value is not None else None


def torch_dtype_from_proto(desc) -> torch.dtype:
    """torch dtype of a ``TensorDescriptor``."""
    name = dtype_name(desc) or str(desc.dtype)
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
