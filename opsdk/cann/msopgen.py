"""msopgen JSON: the operator prototype file ``msopgen gen -i FILE`` generates a project from.

Read as msopgen reads it (its ``interface/op_info_ir_json.py``, with the words of its
``config/transform.json``): snake_case attr types (``list_int``), data type words and
collections (``fp16``, ``all``), a single string where a list is due, one format or type
filled up to the other's length, defaults written as JSON or as text (``"{1, 1}"``,
``"[1, 1]"``, ``"true"``, ``"0.5"``). What msopgen repairs or ignores (a missing
``param_type``, a key it does not read) is repaired or ignored here too, with a
:class:`CannWarning` naming it; what it refuses (tensors listing different numbers of
types), what it would turn into code that cannot build (a default ``"{0"``) and an attr
type it does not know (a typo such as ``list_itn``: msopgen would warn and make the op
without that attr) are refused in one line.
"""

from __future__ import annotations

import difflib
import json
import warnings

from opsdk._runtime import types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann._model import CannOp, CannWarning
from opsdk.cann._values import checked, dtypes_of, parse_value
from opsdk.errors import SpecError

__all__ = ["read"]

# The keys msopgen reads, per object. "language" is no prototype's: CANN's samples
# write it, msopgen takes the project's language from its -lan option.
_OP_KEYS = ("op", "language", "input_desc", "output_desc", "attr")
_TENSOR_KEYS = ("name", "param_type", "format", "type")
_ATTR_KEYS = ("name", "param_type", "type", "default_value")
_KINDS = ("required", "optional", "dynamic")  # param_type msopgen takes for a tensor
# msopgen's collection words (COLLECTION_DTYPE_LIST) that GE's TensorType spells otherwise.
_COLLECTIONS = {"quantizedtype": "QuantifiedType"}
_COLLECTION_WORDS = "numbertype, realnumbertype, quantizedtype, all, BasicType, IndexNumberType"
# msopgen's attr types (IR_ATTR_TYPE_MAP) that no torch schema type holds: what to do.
_NO_TORCH_TYPE = {
    "list_list_int": "torch has no int[][]: flatten it into list_int attrs",
    "tensor": "declare it in input_desc, as a tensor input",
    "list_tensor": "declare it in input_desc, as a dynamic input",
    "list_type": "torch has no ScalarType[]: make it a list_int of GE DataType values",
}
_ATTR_TYPES = ", ".join([*types.BY_MSOPGEN, *_NO_TORCH_TYPE])


def read(text: str, where: str, wanted) -> list[CannOp]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise SpecError(f"{where}: not valid JSON ({err.msg}, line {err.lineno})") from None
    entries = {}  # op type -> its object; msopgen keeps the last of a repeated op type
    for n, entry in enumerate(data if isinstance(data, list) else [data]):
        if not isinstance(entry, dict):
            raise SpecError(f"{where}: entry {n} is not a JSON object; each msopgen op is one")
        op_type = entry.get("op")
        if not isinstance(op_type, str):
            _warn(f'{where}: entry {n} has no "op" name: msopgen skips it, and so does opsdk')
            continue
        if op_type in entries:
            _warn(
                f"{where}: op {op_type!r} is defined twice: the last one is used, as msopgen does"
            )
        entries[op_type] = entry
    return [
        _op(entry, f"{where}: {op_type}")
        for op_type, entry in entries.items()
        if wanted is None or op_type in wanted
    ]


def _warn(message: str) -> None:
    warnings.warn(message, CannWarning, stacklevel=3)


def _op(entry: dict, what: str) -> CannOp:
    _stray(entry, _OP_KEYS, what)
    dtypes: dict[str, tuple[str, ...]] = {}
    formats: dict[str, tuple[str, ...]] = {}
    inputs: list[Input] = []
    outputs: list[Output] = []
    for desc in _objects(entry, "input_desc", what):
        inputs.append(Input(*_tensor(desc, "input", what, dtypes, formats)))
    for desc in _objects(entry, "output_desc", what):
        name, kind = _tensor(desc, "output", what, dtypes, formats)
        if kind == "optional":
            raise SpecError(
                f"{what}: output {name!r} is optional, which a GE IR output cannot be "
                "(required or dynamic): make it required"
            )
        outputs.append(Output(name, kind))
    attrs = [_attr(desc, what) for desc in _objects(entry, "attr", what)]
    _same_counts(dtypes, what)
    return CannOp(IrDef(entry["op"], inputs, outputs, attrs), dtypes, formats)


def _same_counts(dtypes: dict, what: str) -> None:
    """Every tensor lists as many types (a collection word counting as its types): msopgen
    refuses the op otherwise (its ``_check_input_output_info``), the i-th of each being one
    supported combination."""
    first = next(iter(dtypes), None)
    for name, found in dtypes.items():
        if len(found) != len(dtypes[first]):
            raise SpecError(
                f"{what}: {name!r} lists {len(found)} types and {first!r} "
                f"{len(dtypes[first])}; give every input and output one type per supported "
                "combination, as msopgen requires"
            )


def _objects(entry: dict, key: str, what: str) -> list[dict]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise SpecError(f"{what}: {key!r} must be a list of objects")
    return value


def _stray(obj: dict, keys: tuple[str, ...], what: str) -> None:
    """Warn of each key msopgen does not read (an msopst case's ``dtype``, ``value``...)."""
    for key in obj:
        if key not in keys:
            _warn(
                f"{what}: key {key!r} is not msopgen's and is ignored, as msopgen does "
                f"(its keys here: {', '.join(keys)})"
            )


def _name(desc: dict, what: str) -> str:
    name = desc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f'{what} has no "name": give each input, output and attr one')
    return name.strip()


def _param_type(desc: dict, kinds: tuple[str, ...], what: str) -> str:
    """``param_type``; msopgen takes a missing or unknown one as required."""
    kind = desc.get("param_type")
    if kind in kinds:
        return kind
    said = (
        f"param_type {kind!r} (not {', '.join(kinds)})" if "param_type" in desc else "no param_type"
    )
    _warn(f"{what} has {said}: taken as required, as msopgen does")
    return "required"


def _tensor(desc: dict, side: str, what: str, dtypes: dict, formats: dict) -> tuple[str, str]:
    """``(name, param_type)`` of an input_desc/output_desc entry; its data types and
    formats go to ``dtypes`` and ``formats``."""
    name = _name(desc, f"{what}: an {side}")
    what = f"{what}: {side} {name!r}"
    _stray(desc, _TENSOR_KEYS, what)
    kind = _param_type(desc, _KINDS, what)
    words = _words(desc.get("type"))
    if not words:
        raise SpecError(f'{what} has no "type" list: give its data types, e.g. "type": ["float16"]')
    fmts = _words(desc.get("format"))
    if not fmts:
        _warn(f'{what} has no "format" list: taken as ND (msopgen drops such a tensor: add one)')
        fmts = ["ND"]
    # msopgen fills a one-value list up to the other's length.
    if len(fmts) == 1:
        fmts = fmts * len(words)
    elif len(words) == 1:
        words = words * len(fmts)
    if len(fmts) != len(words):
        raise SpecError(
            f"{what}: {len(words)} types and {len(fmts)} formats; give one format per type "
            "(or one for all)"
        )
    dtypes[name], formats[name] = (), ()
    for word, fmt in zip(words, fmts, strict=True):
        found = _dtypes(word, what)
        dtypes[name] += found
        formats[name] += (fmt,) * len(found)  # a collection word's format serves each type
    return name, kind


def _words(value) -> list[str]:
    """A ``type`` or ``format`` value: a list of words, or one word; stripped, as msopgen does."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return []
    return [v.strip() for v in value]


def _dtypes(word: str, what: str) -> tuple[str, ...]:
    found: tuple[str, ...] = ()
    try:
        found = dtypes_of([_COLLECTIONS.get(word.lower(), word)], what)
    except SpecError:
        pass
    if not found:
        known = ", ".join(d.msopgen for d in types.DTYPES.values() if d.msopgen)
        raise SpecError(
            f"{what}: unknown data type {word!r}; msopgen's are {known} and the collections "
            f"{_COLLECTION_WORDS}"
        )
    return found


def _attr(desc: dict, what: str) -> Attr:
    name = _name(desc, f"{what}: an attr")
    what = f"{what}: attr {name!r}"
    _stray(desc, _ATTR_KEYS, what)
    kind = desc.get("type")
    kind = kind.strip() if isinstance(kind, str) else repr(kind)  # ["int"] is no type
    if kind in _NO_TORCH_TYPE:
        raise SpecError(
            f"{what} has type {kind!r}, which no torch schema type holds: "
            f"{_NO_TORCH_TYPE[kind]}, or define the op with opsdk new NAME --schema"
        )
    row = types.BY_MSOPGEN.get(kind)
    if row is None:
        near = difflib.get_close_matches(kind.lower(), [*types.BY_MSOPGEN, *_NO_TORCH_TYPE], 1)
        fix = f"write {near[0]!r}" if near else f"use one of msopgen's: {_ATTR_TYPES}"
        raise SpecError(
            f"{what} has type {kind!r}, not one of msopgen's attr types: {fix} (msopgen "
            "would only warn and generate the op without the attr)"
        )
    kind = _param_type(desc, ("required", "optional"), what)
    value = desc.get("default_value")
    if value is None:
        if kind == "optional":
            raise SpecError(
                f'{what} is optional but has no "default_value" (msopgen would write '
                f".{row.reg_op}(None)): give one"
            )
        return Attr(name, row.attr_value_type)
    if kind == "required":
        _warn(
            f'{what} is required: its "default_value" is ignored, as msopgen does '
            "(make it optional to keep it)"
        )
        return Attr(name, row.attr_value_type)
    if isinstance(value, str):
        value = parse_value(value, row, what)
    if value == {} and row.schema.endswith("[]"):  # msopgen renders the empty C++ list {}
        value = []
    return Attr(name, row.attr_value_type, checked(value, row, what))
