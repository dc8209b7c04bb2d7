"""The words CANN's op definitions share: data type names, C++ argument lists, attr values.

msopgen JSON, ``REG_OP`` text and AscendC ``OpDef`` code spell data types, lists and
defaults alike; each reader takes them from here.
"""

from __future__ import annotations

import json
import re

from opsdk._runtime import types
from opsdk.errors import SpecError

# GE's named type sets (``TensorType::BasicType()``...; graph/types.h).
_NAMED_SETS = {
    "ALL": "BOOL COMPLEX128 COMPLEX64 DOUBLE FLOAT FLOAT16 INT16 INT32 INT64 INT8 QINT16 QINT32"
    " QINT8 QUINT16 QUINT8 RESOURCE STRING UINT16 UINT32 UINT64 UINT8 BF16 COMPLEX32",
    "QuantifiedType": "QINT16 QINT32 QINT8 QUINT16 QUINT8",
    "OrdinaryType": "BOOL COMPLEX128 COMPLEX64 DOUBLE FLOAT FLOAT16 INT16 INT32 INT64 INT8"
    " UINT16 UINT32 UINT64 UINT8 BF16 COMPLEX32",
    "BasicType": "COMPLEX128 COMPLEX64 DOUBLE FLOAT FLOAT16 INT16 INT32 INT64 INT8 QINT16 QINT32"
    " QINT8 QUINT16 QUINT8 UINT16 UINT32 UINT64 UINT8 BF16 COMPLEX32",
    "NumberType": "COMPLEX128 COMPLEX64 DOUBLE FLOAT FLOAT16 INT16 INT32 INT64 INT8 QINT32 QINT8"
    " QUINT8 UINT16 UINT32 UINT64 UINT8 BF16 COMPLEX32",
    "RealNumberType": "DOUBLE FLOAT FLOAT16 INT16 INT32 INT64 INT8 UINT16 UINT32 UINT64 UINT8 BF16",
    "ComplexDataType": "COMPLEX128 COMPLEX64 COMPLEX32",
    "IntegerDataType": "INT16 INT32 INT64 INT8 UINT16 UINT32 UINT64 UINT8",
    "SignedDataType": "INT16 INT32 INT64 INT8",
    "UnsignedDataType": "UINT16 UINT32 UINT64 UINT8",
    "FloatingDataType": "DOUBLE FLOAT FLOAT16",
    "IndexNumberType": "INT32 INT64",
    "UnaryDataType": "COMPLEX128 COMPLEX64 DOUBLE FLOAT FLOAT16 BF16 COMPLEX32",
    "FLOAT": "FLOAT FLOAT16 BF16",
}
_SETS = {k.lower(): tuple(f"DT_{t}" for t in v.split()) for k, v in _NAMED_SETS.items()}
# Words of a TensorType expression that name no type: the constructor and C++ syntax.
_TYPE_SYNTAX = {"tensortype", "listtensortype"}


def dtypes_of(words, what: str) -> tuple[str, ...]:
    """GE enumerators of a list of type words: enumerators, msopgen names, named sets
    (``::FLOAT`` from ``TensorType::FLOAT()`` is always the set; a bare ``float``, fp32)."""
    out: list[str] = []
    for word in words:
        if word.lower() in _TYPE_SYNTAX:
            continue
        row = None if word.startswith("::") else types.dtype(word)
        named = _SETS.get(word.removeprefix("::").lower())
        if row is None and named is None:
            raise SpecError(f"{what}: unknown data type {word!r}; use GE's DT_* names")
        out += [row.ge] if row is not None else (named or ())
    return tuple(out)


def type_words(type_text: str) -> list[str]:
    """The words of a REG_OP ``TensorType`` expression (``TensorType::ALL()`` -> ``::ALL``)."""
    return re.findall(r"(?:::)?\w+", type_text)


# A string literal (kept), a line comment or a block comment (blanked).
_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)


def without_comments(text: str) -> str:
    """C++ ``text`` with its comments blanked, string literals kept: same length and lines,
    so positions still point into the source."""
    return _COMMENT.sub(
        lambda m: m[0] if m[0].startswith('"') else re.sub(r"[^\n]", " ", m[0]), text
    )


def unquoted(text: str, start: int = 0):
    """``(index, char, depth)`` of each character outside string literals; ``depth``
    counts the brackets open after it."""
    depth, quoted = 0, False
    for i in range(start, len(text)):
        ch = text[i]
        if quoted:
            quoted = ch != '"' or text[i - 1] == "\\"
            continue
        quoted = ch == '"'
        depth += (ch in "({") - (ch in ")}")
        yield i, ch, depth


def closing(text: str, open_at: int, what: str) -> int:
    """Index of the parenthesis closing the one at ``open_at``."""
    for i, _, depth in unquoted(text, open_at):
        if depth == 0:
            return i
    raise SpecError(f"{what}: unbalanced parentheses")


def split(args: str) -> list[str]:
    """Top-level comma-separated arguments of a macro call."""
    parts, start = [], 0
    for i, ch, depth in unquoted(args):
        if ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    parts.append(args[start:])
    return [p.replace("\\n", " ").strip() for p in parts if p.strip()]


def parse_value(text: str, row: types.SchemaType, what: str):
    """An attr default as C++ (and msopgen's ``default_value``) writes it: ``1e-6``,
    ``true``, ``"mean"``, ``{1, 2}``, ``DT_FLOAT16`` (an Int or Type: GE's value)."""
    text = text.strip()
    if row.schema.endswith("[]"):
        element = types.TYPES[row.schema.removesuffix("[]")]
        inner = _list_text(text, row, what)
        return [parse_value(p, element, what) for p in split(inner)] if inner else []
    if row.schema == "str":
        return json.loads(text) if text.startswith('"') else text
    if row.schema == "bool" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    dt = types.dtype(text) if text.startswith("DT_") or row.schema == "ScalarType" else None
    if dt is not None and row.schema in ("int", "ScalarType"):
        return dt.value
    try:
        number = float(text.rstrip("fF")) if row.schema == "float" else int(text, 0)
    except ValueError:
        raise SpecError(f"{what}: default {text!r} is not a {row.reg_op}") from None
    return number


def _list_text(text: str, row: types.SchemaType, what: str) -> str:
    """What a list default's brackets hold (``{1, 2}``, ``[1, 2]``; bare ``1, 2``). Brackets
    that do not pair (``{0``) are refused: C++ (and msopgen, which copies the text into the
    code it writes) would not build."""
    pairs = {"{": "}", "[": "]"}
    opened, closed = text[:1] in pairs, text[-1:] in pairs.values()
    inner = text[1:-1] if opened and closed else text
    if (
        opened != closed
        or (opened and pairs[text[0]] != text[-1])
        or any(b in inner for b in "{}[]")
    ):
        bare = inner.strip("{}[] ")
        raise SpecError(
            f"{what}: default {text!r} is not a {row.reg_op}: its brackets do not pair; "
            f"write it {{{bare}}}"
        )
    return inner.strip()


def checked(value, row: types.SchemaType, what: str):
    """``value`` if it is of the attr's type (ints pass as floats)."""
    element = row.schema.removesuffix("[]")
    kinds: dict[str, type | tuple[type, ...]]
    kinds = {"int": int, "ScalarType": int, "float": (int, float), "bool": bool, "str": str}
    values = value if row.schema.endswith("[]") else [value]
    if row.schema.endswith("[]") and not isinstance(value, list):
        raise SpecError(f"{what}: default {value!r} is not a list")
    for v in values:
        if not isinstance(v, kinds[element]) or (element != "bool" and isinstance(v, bool)):
            raise SpecError(f"{what}: default {v!r} is not a {row.reg_op}")
    return (
        [float(v) for v in values]
        if element == "float" and row.schema.endswith("[]")
        else (float(value) if element == "float" else value)
    )
