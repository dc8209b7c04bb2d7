"""msopgen JSON: the operator prototype file ``msopgen gen -i FILE`` generates a project from."""

from __future__ import annotations

import json

from opsdk.errors import SpecError
from opsdk.runtime import types
from opsdk.runtime.irdef import Attr, Input, IrDef, Output
from opsdk.scaffold.cann._model import CannOp
from opsdk.scaffold.cann._values import checked, dtypes_of, parse_value


def read(text: str, where: str, wanted) -> list[CannOp]:
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
        found = dtypes_of([words] if isinstance(words, str) else words, f"{what}.{name}")
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
            value = parse_value(value, row, f"{what}.{name}")
        default = checked(value, row, f"{what}.{name}")
    return Attr(name, row.value_type, default)
