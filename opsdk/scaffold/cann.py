"""Read the op definitions an AscendC op project has into one model.

An existing CANN op is declared twice over in its project: the msopgen JSON the
kernel project was generated from, and the ``REG_OP(...)`` prototype graph code
compiles. Either one becomes a :class:`CannOp`: the GE IR with CANN's names
(:class:`~opsdk.runtime.irdef.IrDef`) and, per input and output, the data types and
formats it accepts. ``opsdk new --from-cann`` writes the torch side from it and
``opsdk ir`` writes both formats back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from opsdk.errors import SpecError
from opsdk.runtime import types
from opsdk.runtime.irdef import Attr, Input, IrDef, Output

__all__ = ["CannOp", "read"]


@dataclass(frozen=True)
class CannOp:
    """One CANN op: its IR and what each tensor accepts.

    ``dtypes`` maps every input and output name to GE ``DataType`` enumerators
    (``DT_FLOAT16``); as in msopgen JSON, the i-th entries of equally long lists form
    one supported combination. A tensor typed by a ``DATATYPE`` symbol that the text
    never declares has ``()`` (any). ``type_vars`` names the symbol a tensor shares
    with others (``"T"``: same dtype). ``formats`` are msopgen's, aligned with
    ``dtypes`` (``ND`` where the source states none).
    """

    ir: IrDef
    dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    formats: dict[str, tuple[str, ...]] = field(default_factory=dict)
    type_vars: dict[str, str] = field(default_factory=dict)


def read(source: str | Path, op_types=None) -> list[CannOp]:
    """Every op defined in ``source``: a file path or its text, msopgen JSON or text
    holding ``REG_OP(...)`` prototypes (a header, a docstring). ``op_types`` keeps only
    the ops of those types (others are not parsed)."""
    text, where = _text_of(source)
    wanted = None if op_types is None else set(op_types)
    if text.lstrip().startswith(("[", "{")):
        ops = _read_msopgen(text, where, wanted)
    else:
        ops = _read_reg_ops(text, where, wanted)
    if not ops:
        missing = f" of type {', '.join(sorted(wanted))}" if wanted else ""
        raise SpecError(
            f"{where}: no op definition{missing} found; give msopgen JSON or REG_OP(...) text"
        )
    return ops


def _text_of(source) -> tuple[str, str]:
    """The text of ``source`` and how messages name it. A string holding a definition
    (JSON, ``REG_OP``, several lines) is the text itself; any other string is a path."""
    if isinstance(source, str) and (
        "\n" in source or "REG_OP" in source or source.lstrip().startswith(("[", "{"))
    ):
        return source, "<text>"
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as err:
        raise SpecError(f"{path}: cannot read it ({err.strerror})") from None


# --- Data types ----------------------------------------------------------------------------

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


def _dtypes_of(words, what: str) -> tuple[str, ...]:
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
        out += [row.ge] if row is not None else named
    return tuple(out)


def _type_words(type_text: str) -> list[str]:
    """The words of a REG_OP ``TensorType`` expression (``TensorType::ALL()`` -> ``::ALL``)."""
    return re.findall(r"(?:::)?\w+", type_text)


# --- msopgen JSON --------------------------------------------------------------------------


def _read_msopgen(text: str, where: str, wanted) -> list[CannOp]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SpecError(f"{where}: not valid JSON ({err.msg}, line {err.lineno})") from None
    entries = data if isinstance(data, list) else [data]
    ops = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("op"), str):
            raise SpecError(f'{where}: each msopgen op is an object with an "op" name')
        if wanted is None or entry["op"] in wanted:
            ops.append(_msopgen_op(entry, f"{where}: {entry['op']}"))
    return ops


def _msopgen_op(entry: dict, what: str) -> CannOp:
    dtypes, formats = {}, {}

    def tensor(desc: dict, kinds):
        name = desc.get("name")
        kind = desc.get("param_type", "required")
        if not isinstance(name, str) or kind not in kinds:
            raise SpecError(f"{what}: each tensor needs a name and param_type in {kinds}")
        words = desc.get("type", [])
        found = _dtypes_of([words] if isinstance(words, str) else words, f"{what}.{name}")
        fmts = desc.get("format", [])
        fmts = tuple([fmts] if isinstance(fmts, str) else fmts)
        # msopgen fills a one-value list up to the other's length.
        if len(fmts) <= 1 and found:
            fmts = (fmts[0] if fmts else "ND",) * len(found)
        elif len(found) == 1:
            found = found * len(fmts)
        if len(fmts) != len(found):
            raise SpecError(f"{what}.{name}: format and type lists differ in length")
        dtypes[name], formats[name] = found, fmts
        return name, kind

    inputs = [
        Input(*tensor(d, ("required", "optional", "dynamic"))) for d in _list(entry, "input_desc")
    ]
    outputs = [Output(*tensor(d, ("required", "dynamic"))) for d in _list(entry, "output_desc")]
    attrs = [_msopgen_attr(a, what) for a in _list(entry, "attr")]
    ir = IrDef(entry["op"], inputs, outputs, attrs)
    return CannOp(ir, dtypes, formats)


def _list(entry: dict, key: str) -> list:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise SpecError(f"{entry['op']}: {key!r} must be a list of objects")
    return value


def _msopgen_attr(desc: dict, what: str) -> Attr:
    name, kind = desc.get("name"), str(desc.get("type", ""))
    row = {k.lower(): r for k, r in types.BY_MSOPGEN.items()}.get(kind.lower())
    if not isinstance(name, str) or row is None:
        known = ", ".join(types.BY_MSOPGEN)
        raise SpecError(f"{what}: attr {name!r} has type {kind!r}; msopgen attr types: {known}")
    default = None
    if desc.get("param_type", "required") == "optional" and "default_value" in desc:
        value = desc["default_value"]
        if isinstance(value, str):
            value = _value(value, row, f"{what}.{name}")
        default = _checked(value, row, f"{what}.{name}")
    return Attr(name, row.value_type, default)


# --- REG_OP --------------------------------------------------------------------------------

_REG_OP = re.compile(r"\bREG_OP\s*\(\s*(\w+)\s*\)")
# Between two ``.MACRO(...)`` calls: blanks, and the ``\n`` escapes of docstring source.
_GAP = re.compile(r"(?:\s|\\n)*")
_CALL = re.compile(r"\.\s*(\w+)\s*\(")
_INPUTS = {"INPUT": "required", "OPTIONAL_INPUT": "optional", "DYNAMIC_INPUT": "dynamic"}
_OUTPUTS = {"OUTPUT": "required", "DYNAMIC_OUTPUT": "dynamic"}


def _read_reg_ops(text: str, where: str, wanted) -> list[CannOp]:
    ops = []
    for match in _REG_OP.finditer(text):
        op_type = match.group(1)
        if wanted is None or op_type in wanted:
            calls = _calls(text, match.end(), f"{where}: REG_OP({op_type})")
            ops.append(_reg_op(op_type, calls, f"{where}: REG_OP({op_type})"))
    return ops


def _calls(text: str, pos: int, what: str) -> list[tuple[str, list[str]]]:
    """The ``.MACRO(arg, ...)`` chain after ``REG_OP(name)``, up to OP_END_FACTORY_REG
    or the first text that is not a call."""
    calls = []
    while True:
        pos = _GAP.match(text, pos).end()
        call = _CALL.match(text, pos)
        if call is None:
            return calls
        end = _closing(text, call.end() - 1, what)
        calls.append((call.group(1), _split(text[call.end() : end])))
        pos = end + 1
        if call.group(1) == "OP_END_FACTORY_REG":
            return calls


def _unquoted(text: str, start: int = 0):
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


def _closing(text: str, open_at: int, what: str) -> int:
    """Index of the parenthesis closing the one at ``open_at``."""
    for i, _, depth in _unquoted(text, open_at):
        if depth == 0:
            return i
    raise SpecError(f"{what}: unbalanced parentheses")


def _split(args: str) -> list[str]:
    """Top-level comma-separated arguments of a macro call."""
    parts, start = [], 0
    for i, ch, depth in _unquoted(args):
        if ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
    parts.append(args[start:])
    return [p.replace("\\n", " ").strip() for p in parts if p.strip()]


def _reg_op(op_type: str, calls, what: str) -> CannOp:
    inputs, outputs, attrs, dtypes, type_vars, declared = [], [], [], {}, {}, {}
    for macro, args in calls:
        if macro in _INPUTS or macro in _OUTPUTS:
            _arity(macro, args, 2, what)
            name, type_text = args
            if type_text.startswith('"'):
                type_vars[name] = json.loads(type_text)
            else:
                dtypes[name] = _dtypes_of(_type_words(type_text), f"{what}.{name}")
            if macro in _INPUTS:
                inputs.append(Input(name, _INPUTS[macro]))
            else:
                outputs.append(Output(name, _OUTPUTS[macro]))
        elif macro == "DATATYPE":
            _arity(macro, args, 2, what)
            declared[args[0]] = _dtypes_of(_type_words(args[1]), f"{what}.{args[0]}")
        elif macro in ("ATTR", "REQUIRED_ATTR"):
            _arity(macro, args, 3 if macro == "ATTR" else 2, what)
            attrs.append(_reg_op_attr(args, f"{what}.{args[0]}"))
        elif macro == "OP_END_FACTORY_REG":
            if args != [op_type]:
                raise SpecError(f"{what}: ends with OP_END_FACTORY_REG({', '.join(args)})")
        else:
            raise SpecError(f"{what}: unsupported macro .{macro}(...)")
    for name, symbol in type_vars.items():
        dtypes[name] = declared.get(symbol, ())
    names = [t.name for t in (*inputs, *outputs)]
    formats = {n: ("ND",) * len(dtypes[n]) for n in names}
    ir = IrDef(op_type, inputs, outputs, attrs)
    return CannOp(ir, {n: dtypes[n] for n in names}, formats, type_vars)


def _arity(macro: str, args: list, count: int, what: str) -> None:
    if len(args) != count:
        raise SpecError(f"{what}: .{macro} takes {count} arguments, got {len(args)}")


def _reg_op_attr(args: list[str], what: str) -> Attr:
    # REG_OP attr types are case-sensitive in C++; CANN's own docs also write `int`.
    row = {k.lower(): r for k, r in types.BY_REG_OP.items()}.get(args[1].lower())
    if row is None:
        known = ", ".join(types.BY_REG_OP)
        raise SpecError(f"{what}: attr type {args[1]!r} has no torch type; supported: {known}")
    default = None if len(args) == 2 else _checked(_value(args[2], row, what), row, what)
    return Attr(args[0], row.value_type, default)


# --- Attr values ---------------------------------------------------------------------------


def _value(text: str, row: types.SchemaType, what: str):
    """An attr default as C++ (and msopgen's ``default_value``) writes it: ``1e-6``,
    ``true``, ``"mean"``, ``{1, 2}``, ``DT_FLOAT16`` (an Int or Type: GE's value)."""
    text = text.strip()
    if row.schema.endswith("[]"):
        element = types.TYPES[row.schema.removesuffix("[]")]
        inner = text.strip("{}[] ")
        return [_value(p, element, what) for p in _split(inner)] if inner else []
    if row.schema == "str":
        return json.loads(text) if text.startswith('"') else text
    if row.schema == "bool" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    dt = types.dtype(text) if text.startswith("DT_") else None
    if dt is not None and row.schema in ("int", "ScalarType"):
        return dt.value
    try:
        number = float(text.rstrip("fF")) if row.schema == "float" else int(text, 0)
    except ValueError:
        raise SpecError(f"{what}: default {text!r} is not a {row.reg_op}") from None
    return number


def _checked(value, row: types.SchemaType, what: str):
    """``value`` if it is of the attr's type (ints pass as floats)."""
    element = row.schema.removesuffix("[]")
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
