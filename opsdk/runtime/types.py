"""The one table of schema types: every spelling a type has in the places an op goes.

Generated Python, C++ kernels, GE converters, IR definitions and CANN's tools each
spell a schema type their own way; every other table in opsdk is derived from this
one, so they cannot disagree. Where each column comes from:

- ``schema``: torch's schema language (``torch._C.parse_schema``); lists as ``T[]``.
- ``py``: the annotation generated Python functions use for an argument.
- ``cpp``: the C++ parameter type torch's unboxing expects (what aten's kernels take);
  ``cpp_optional`` for ``T[]?`` where aten uses a dedicated type, ``cpp_return`` for a
  list returned (a value type returns as ``cpp``).
- ``ge_attr``: the ``torchair.ge.attr`` builder a converter passes it with (TorchAir).
- ``value_type``: the IR attr value type ``get_registered_ir_def`` answers (GE ``VT_*``).
- ``attr_field``: the ``AttrDef`` oneof field GE reads that attr from (GE ``ge_ir.proto``).
- ``msopgen`` / ``reg_op``: the attr type in CANN's msopgen JSON and ``REG_OP`` macros.

A type without ``value_type`` is never a GE attr; ``symbolic`` types (``SymInt``,
``Scalar``) may be symbolic under dynamic shapes, so they are GE host inputs instead.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SchemaType", "TYPES", "BY_VALUE_TYPE", "base", "row"]


@dataclass(frozen=True)
class SchemaType:
    schema: str
    py: str
    cpp: str | None = None
    cpp_optional: str | None = None
    cpp_return: str | None = None
    ge_attr: str | None = None
    value_type: str | None = None
    attr_field: str | None = None
    msopgen: str | None = None
    reg_op: str | None = None
    symbolic: bool = False


def _list(element: SchemaType, cpp: str, **columns) -> SchemaType:
    """The row of ``element[]``: its Python annotation follows from the element's."""
    return SchemaType(
        f"{element.schema}[]", f"list[{element.py}]", cpp, symbolic=element.symbolic, **columns
    )


def _attr(ge_attr: str, value_type: str, field: str, msopgen: str, reg_op: str) -> dict:
    """The GE columns of a type that can be a GE attr."""
    return {
        "ge_attr": ge_attr,
        "value_type": value_type,
        "attr_field": field,
        "msopgen": msopgen,
        "reg_op": reg_op,
    }


_TENSOR = SchemaType("Tensor", "torch.Tensor", "at::Tensor")
_OPTIONAL_TENSOR = SchemaType("Tensor?", "torch.Tensor | None")  # only as a list element
_INT = SchemaType("int", "int", "int64_t", **_attr("Int", "VT_INT", "i", "int", "Int"))
_SYMINT = SchemaType("SymInt", "int", "c10::SymInt", symbolic=True)
_FLOAT = SchemaType("float", "float", "double", **_attr("Float", "VT_FLOAT", "f", "float", "Float"))
_BOOL = SchemaType("bool", "bool", "bool", **_attr("Bool", "VT_BOOL", "b", "bool", "Bool"))
_STR = SchemaType(
    "str", "str", "c10::string_view", **_attr("Str", "VT_STRING", "s", "string", "String")
)
_SCALAR = SchemaType("Scalar", "float", "at::Scalar", symbolic=True)

_ROWS = (
    _TENSOR,
    _INT,
    _SYMINT,
    _FLOAT,
    _BOOL,
    _STR,
    _SCALAR,
    SchemaType(
        "ScalarType",
        "torch.dtype",
        "at::ScalarType",
        **_attr("DataType", "VT_DATA_TYPE", "dt", "type", "Type"),
    ),
    SchemaType("Layout", "torch.layout", "at::Layout"),
    SchemaType("Device", "torch.device", "at::Device"),
    SchemaType("MemoryFormat", "torch.memory_format", "at::MemoryFormat"),
    SchemaType("Generator", "torch.Generator", "at::Generator"),
    _list(_TENSOR, "at::TensorList", cpp_return="std::vector<at::Tensor>"),
    _list(_OPTIONAL_TENSOR, "c10::List<std::optional<at::Tensor>>"),
    _list(
        _INT,
        "at::IntArrayRef",
        cpp_optional="at::OptionalIntArrayRef",
        cpp_return="std::vector<int64_t>",
        **_attr("ListInt", "VT_LIST_INT", "list", "listInt", "ListInt"),
    ),
    _list(_SYMINT, "c10::SymIntArrayRef", cpp_optional="at::OptionalSymIntArrayRef"),
    _list(
        _FLOAT,
        "at::ArrayRef<double>",
        cpp_optional="std::optional<at::ArrayRef<double>>",
        **_attr("ListFloat", "VT_LIST_FLOAT", "list", "listFloat", "ListFloat"),
    ),
    _list(_SCALAR, "at::ArrayRef<at::Scalar>"),
    _list(
        _BOOL,
        "c10::List<bool>",
        **_attr("ListBool", "VT_LIST_BOOL", "list", "listBool", "ListBool"),
    ),
    _list(
        _STR,
        "std::vector<c10::string_view>",
        **_attr("ListStr", "VT_LIST_STRING", "list", "listString", "ListString"),
    ),
)

TYPES: dict[str, SchemaType] = {r.schema: r for r in _ROWS}
"""Schema spelling (lists as ``T[]``) -> its row."""

BY_VALUE_TYPE: dict[str, SchemaType] = {r.value_type: r for r in _ROWS if r.value_type}
"""GE IR attr value type (``VT_INT``...) -> the row of the schema type it carries."""


def base(type_text: str) -> str:
    """``int[2]?`` -> ``int[]``: the spelling that keys :data:`TYPES`."""
    text = type_text.removesuffix("?")
    if text.endswith("]"):
        text = text[: text.index("[")] + "[]"
    return text


def row(type_text: str) -> SchemaType | None:
    """The row of a schema type (optional and sized forms included), None if it has none."""
    return TYPES.get(base(type_text))
