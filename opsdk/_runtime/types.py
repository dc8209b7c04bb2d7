"""The one table of schema types: every spelling a type has in the places an op goes.

Generated Python, C++ kernels, GE converters, IR definitions and CANN's tools each
spell a schema type their own way; every other table in opsdk is derived from this
one, so they cannot disagree. Where each column comes from:

- ``schema``: torch's schema language (``torch._C.parse_schema``); lists as ``T[]``.
- ``py``: the annotation generated Python functions use for an argument.
- ``cpp``: the C++ parameter type torch's unboxing expects (what aten's kernels take);
  ``cpp_optional`` for ``T[]?`` where aten uses a dedicated type, ``cpp_return`` for a
  list returned (a value type returns as ``cpp``).
- ``ge_attr``: the ``torchair.ge.attr`` builder a converter passes it with (TorchAir), also
  the type of an IR attr in a generated ``ir.py`` (:class:`opsdk.irdef.Attr`), so both files
  spell an attr's type alike (``attr.Float(eps)``, ``Attr("eps", "Float")``);
  ``ge_value``: the function of ``torchair.ge._ge_graph`` that makes the torch value the
  builder's (a ``torch.dtype`` becomes GE's ``DataType`` number, as TorchAir's converters do).
- ``value_type``: the IR attr value type ``get_registered_ir_def`` answers (GE ``VT_*``).
- ``attr_field``: the ``AttrDef`` oneof field GE reads that attr from (GE ``ge_ir.proto``).
- ``msopgen`` / ``reg_op``: the attr type in CANN's msopgen JSON and ``REG_OP`` macros.
- ``aclnn``: the attr's parameter type in the aclnn API CANN's build (opbuild) generates for an
  op; None: opbuild generates none for it. An OpDef declares a dtype attr ``.Int(ge::DT_X)``, so
  a ``REG_OP`` ``Type`` is an ``int64_t`` holding GE's number.

A type without ``value_type`` is never a GE attr; ``symbolic`` types (``SymInt``,
``Scalar``) may be symbolic under dynamic shapes, so they are GE host inputs instead.

Tensor element types have their own table, :data:`DTYPES`: GE's ``DataType``
enumerators (``graph/types.h``; C++ numbering, as ``torchair.ge.DataType``), the torch
dtype and the spelling in CANN's msopgen JSON. torch's ``ScalarType`` numbering is not
GE's (torch's float is 6, GE's 6 is ``DT_INT16``): a dtype crosses by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from opsdk.errors import SpecError

__all__ = [
    "SchemaType",
    "TYPES",
    "BY_VALUE_TYPE",
    "BY_GE_ATTR",
    "BY_REG_OP",
    "BY_MSOPGEN",
    "base",
    "row",
    "DType",
    "DTYPES",
    "BY_GE_VALUE",
    "dtype",
]


@dataclass(frozen=True)
class SchemaType:
    schema: str
    py: str
    cpp: str | None = None
    cpp_optional: str | None = None
    cpp_return: str | None = None
    ge_attr: str | None = None
    ge_value: str | None = None
    value_type: str | None = None
    attr_field: str | None = None
    msopgen: str | None = None
    reg_op: str | None = None
    aclnn: str | None = None
    symbolic: bool = False

    @property
    def attr_value_type(self) -> str:
        """GE's value type (``VT_*``) of a type that is an attr (a ``BY_REG_OP`` row's)."""
        if self.value_type is None:
            raise ValueError(f"{self.schema} is no GE attr type")
        return self.value_type


def _list(element: SchemaType, cpp: str, **columns) -> SchemaType:
    """The row of ``element[]``: its Python annotation follows from the element's."""
    return SchemaType(
        f"{element.schema}[]", f"list[{element.py}]", cpp, symbolic=element.symbolic, **columns
    )


def _attr(
    ge_attr: str, value_type: str, field: str, msopgen: str, reg_op: str, aclnn: str | None
) -> dict:
    """The GE and CANN columns of a type that can be a GE attr."""
    return {
        "ge_attr": ge_attr,
        "value_type": value_type,
        "attr_field": field,
        "msopgen": msopgen,
        "reg_op": reg_op,
        "aclnn": aclnn,
    }


_TENSOR = SchemaType("Tensor", "torch.Tensor", "at::Tensor")
_OPTIONAL_TENSOR = SchemaType("Tensor?", "torch.Tensor | None")  # only as a list element
_INT = SchemaType("int", "int", "int64_t", **_attr("Int", "VT_INT", "i", "int", "Int", "int64_t"))
_SYMINT = SchemaType("SymInt", "int", "c10::SymInt", symbolic=True)
_FLOAT = SchemaType(
    "float", "float", "double", **_attr("Float", "VT_FLOAT", "f", "float", "Float", "double")
)
_BOOL = SchemaType("bool", "bool", "bool", **_attr("Bool", "VT_BOOL", "b", "bool", "Bool", "bool"))
_STR = SchemaType(
    "str", "str", "c10::string_view", **_attr("Str", "VT_STRING", "s", "string", "String", "char *")
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
        ge_value="torch_type_to_ge_type",
        **_attr("DataType", "VT_DATA_TYPE", "dt", "type", "Type", "int64_t"),
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
        **_attr("ListInt", "VT_LIST_INT", "list", "list_int", "ListInt", "const aclIntArray *"),
    ),
    _list(_SYMINT, "c10::SymIntArrayRef", cpp_optional="at::OptionalSymIntArrayRef"),
    _list(
        _FLOAT,
        "at::ArrayRef<double>",
        cpp_optional="std::optional<at::ArrayRef<double>>",
        **_attr(
            "ListFloat", "VT_LIST_FLOAT", "list", "list_float", "ListFloat", "const aclFloatArray *"
        ),
    ),
    _list(_SCALAR, "at::ArrayRef<at::Scalar>"),
    _list(
        _BOOL,
        "c10::List<bool>",
        **_attr(
            "ListBool", "VT_LIST_BOOL", "list", "list_bool", "ListBool", "const aclBoolArray *"
        ),
    ),
    _list(
        _STR,
        "std::vector<c10::string_view>",
        **_attr("ListStr", "VT_LIST_STRING", "list", "list_string", "ListString", None),
    ),
)

TYPES: dict[str, SchemaType] = {r.schema: r for r in _ROWS}
"""Schema spelling (lists as ``T[]``) -> its row."""

BY_VALUE_TYPE: dict[str, SchemaType] = {r.value_type: r for r in _ROWS if r.value_type}
"""GE IR attr value type (``VT_INT``...) -> the row of the schema type it carries."""

BY_GE_ATTR: dict[str, SchemaType] = {r.ge_attr: r for r in _ROWS if r.ge_attr}
"""``torchair.ge.attr`` builder (``Int``, ``ListFloat``, ``DataType``...) -> its row."""

BY_REG_OP: dict[str, SchemaType] = {r.reg_op: r for r in _ROWS if r.reg_op}
"""``REG_OP`` attr type (``Int``, ``ListFloat``, ``Type``...) -> its row."""

BY_MSOPGEN: dict[str, SchemaType] = {r.msopgen: r for r in _ROWS if r.msopgen}
"""msopgen JSON attr type (``int``, ``list_float``, ``type``...) -> its row."""


def base(type_text: str) -> str:
    """``int[2]?`` -> ``int[]``: the spelling that keys :data:`TYPES`."""
    text = type_text.removesuffix("?")
    if text.endswith("]"):
        text = text[: text.index("[")] + "[]"
    return text


def row(type_text: str) -> SchemaType | None:
    """The row of a schema type (optional and sized forms included), None if it has none."""
    return TYPES.get(base(type_text))


@dataclass(frozen=True)
class DType:
    """A tensor element type: GE enumerator and value, torch dtype name (None: torch has
    none), its word in msopgen JSON (None: msopgen's table, ``INPUT_OUTPUT_DTYPE_MAP`` of
    its ``config/transform.json``, has none) and the other spellings CANN's files use."""

    ge: str
    value: int
    torch: str | None
    msopgen: str | None
    aliases: tuple[str, ...] = ()


def _dt(ge: str, value: int, torch: str | None, msopgen: str | None, *aliases) -> DType:
    return DType(ge, value, torch, msopgen, aliases)


_DTYPE_ROWS = (
    _dt("DT_FLOAT", 0, "float32", "float", "float32", "fp32"),
    _dt("DT_FLOAT16", 1, "float16", "float16", "fp16", "half"),
    _dt("DT_INT8", 2, "int8", "int8"),
    _dt("DT_INT32", 3, "int32", "int32"),
    _dt("DT_UINT8", 4, "uint8", "uint8"),
    _dt("DT_INT16", 6, "int16", "int16"),
    _dt("DT_UINT16", 7, "uint16", "uint16"),
    _dt("DT_UINT32", 8, "uint32", "uint32"),
    _dt("DT_INT64", 9, "int64", "int64"),
    _dt("DT_UINT64", 10, "uint64", "uint64"),
    _dt("DT_DOUBLE", 11, "float64", "double", "float64", "fp64"),
    _dt("DT_BOOL", 12, "bool", "bool"),
    _dt("DT_STRING", 13, None, "string"),
    _dt("DT_DUAL_SUB_INT8", 14, None, None),
    _dt("DT_DUAL_SUB_UINT8", 15, None, None),
    _dt("DT_COMPLEX64", 16, "complex64", "complex64"),
    _dt("DT_COMPLEX128", 17, "complex128", "complex128"),
    _dt("DT_QINT8", 18, "qint8", "qint8"),
    _dt("DT_QINT16", 19, None, "qint16"),
    _dt("DT_QINT32", 20, "qint32", "qint32"),
    _dt("DT_QUINT8", 21, "quint8", "quint8"),
    _dt("DT_QUINT16", 22, None, "quint16"),
    _dt("DT_RESOURCE", 23, None, "resource"),
    _dt("DT_STRING_REF", 24, None, None),
    _dt("DT_DUAL", 25, None, None),
    _dt("DT_VARIANT", 26, None, None),
    _dt("DT_BF16", 27, "bfloat16", "bfloat16", "bf16"),
    _dt("DT_UNDEFINED", 28, None, None),
    _dt("DT_INT4", 29, None, None),
    _dt("DT_UINT1", 30, None, "uint1"),
    _dt("DT_INT2", 31, None, "int2"),
    _dt("DT_UINT2", 32, None, None),
    _dt("DT_COMPLEX32", 33, "complex32", "complex32"),
    _dt("DT_HIFLOAT8", 34, None, None),
    _dt("DT_FLOAT8_E5M2", 35, "float8_e5m2", None),
    _dt("DT_FLOAT8_E4M3FN", 36, "float8_e4m3fn", None),
    _dt("DT_FLOAT8_E8M0", 37, None, None),
    _dt("DT_FLOAT6_E3M2", 38, None, None),
    _dt("DT_FLOAT6_E2M3", 39, None, None),
    _dt("DT_FLOAT4_E2M1", 40, None, None),
    _dt("DT_FLOAT4_E1M2", 41, None, None),
)

DTYPES: dict[str, DType] = {d.ge: d for d in _DTYPE_ROWS}
# By GE DataType number, as a node, an attr or a compiled op gives it
BY_GE_VALUE: dict[int, DType] = {d.value: d for d in _DTYPE_ROWS}
"""GE enumerator (``DT_FLOAT16``) -> its row."""

_DTYPE_SPELLINGS = {
    spelling.lower(): d
    for d in _DTYPE_ROWS
    for spelling in (d.ge, d.ge.removeprefix("DT_"), d.msopgen, *d.aliases, d.torch)
    if spelling
}


def dtype(spelling: str) -> DType | None:
    """The row of a tensor element type however CANN or torch spells it (``DT_BF16``,
    ``bf16``, ``bfloat16``, ``torch.bfloat16``; CANN's headers also write ``DT_BFLOAT16``,
    ``DT_FLOAT32``, ``DT_FP16``), None if unknown."""
    key = spelling.removeprefix("torch.").lower()
    return _DTYPE_SPELLINGS.get(key) or _DTYPE_SPELLINGS.get(key.removeprefix("dt_"))


def known_dtype(spelling: str) -> DType:
    """:func:`dtype` of a type that must have a row (a tensor's): an unknown one is a
    :class:`SpecError` naming it."""
    row = dtype(spelling)
    if row is None:
        raise SpecError(f"{spelling} has no GE data type: use a dtype CANN has for this tensor")
    return row
