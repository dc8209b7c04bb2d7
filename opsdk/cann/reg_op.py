"""``REG_OP(...)`` text: GE's C++ op prototypes (graph headers, TorchAir's docstrings).

Read as the C++ compiler reads a header: comments are no text (a ``REG_OP(X)`` named in
one is no op, a comment between two calls ends no chain), ``ge::`` qualifies nothing
(opbuild's own ``op_proto.h`` writes ``ge::TensorType::ALL()``) and the header's own
object-like ``#define`` macros stand for their bodies (``TensorType(SUPPORT_TYPES)``).
"""

from __future__ import annotations

import json
import re
import warnings

from opsdk._runtime import types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann._model import CannOp, CannWarning
from opsdk.cann._values import (
    checked,
    closing,
    dtypes_of,
    parse_value,
    split,
    type_words,
    without_comments,
)
from opsdk.errors import SpecError

_REG_OP = re.compile(r"\bREG_OP\s*\(\s*(\w+)\s*\)")
# Between two ``.MACRO(...)`` calls: blanks, and the ``\n`` escapes of docstring source.
_GAP = re.compile(r"(?:\s|\\n)*")
_CALL = re.compile(r"\.\s*(\w+)\s*\(")
# An object-like macro: #define NAME body, the body continued over lines ending in "\".
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+((?:[^\n]*\\\n)*[^\n]*)", re.M)
_INPUTS = {"INPUT": "required", "OPTIONAL_INPUT": "optional", "DYNAMIC_INPUT": "dynamic"}
_OUTPUTS = {"OUTPUT": "required", "DYNAMIC_OUTPUT": "dynamic"}


def read(text: str, where: str, wanted, skip_unreadable: bool = False) -> list[CannOp]:
    """The ``REG_OP`` prototypes of ``text``; with ``skip_unreadable``, one that does not
    read is a :class:`CannWarning` naming it and the rest are read (a file of hundreds,
    TorchAir's generated GE API), unless none reads."""
    text = without_comments(text)
    macros = {m[1]: m[2].replace("\\\n", " ").strip() for m in _DEFINE.finditer(text)}
    ops, refused = [], []
    for match in _REG_OP.finditer(text):
        op_type = match.group(1)
        if wanted is None or op_type in wanted:
            what = f"{where}: REG_OP({op_type})"
            try:
                ops.append(_reg_op(op_type, _calls(text, match.end(), what, macros), what))
            except SpecError as err:
                if not skip_unreadable:
                    raise
                refused.append(err)
    if refused and not ops:
        raise refused[0]
    for refusal in refused:
        warnings.warn(f"skipped {refusal}", CannWarning, stacklevel=4)
    return ops


def _calls(text: str, pos: int, what: str, macros: dict) -> list[tuple[str, list[str]]]:
    """The ``.MACRO(arg, ...)`` chain after ``REG_OP(name)``, up to OP_END_FACTORY_REG
    or the first text that is not a call."""
    calls: list[tuple[str, list[str]]] = []
    while True:
        gap = _GAP.match(text, pos)  # matches, if only the empty string
        pos = gap.end() if gap is not None else pos
        call = _CALL.match(text, pos)
        if call is None:
            return calls
        end = closing(text, call.end() - 1, what)
        args = split(text[call.end() : end])
        calls.append((call.group(1), [_expanded(a, macros) for a in args]))
        pos = end + 1
        if call.group(1) == "OP_END_FACTORY_REG":
            return calls


def _expanded(arg: str, macros: dict) -> str:
    """A call's argument as the compiler sees it: the header's macros replaced by their
    bodies (which may use other macros), ``ge::`` qualifiers dropped; a string is itself."""
    if arg.startswith('"'):
        return arg
    for _ in range(8):  # a macro's body may name another macro
        done = re.sub(r"\bge::", "", re.sub(r"\w+", lambda m: macros.get(m[0], m[0]), arg))
        if done == arg:
            break
        arg = done
    return arg


def _reg_op(op_type: str, calls, what: str) -> CannOp:
    inputs, outputs, attrs, dtypes, type_vars, declared = [], [], [], {}, {}, {}
    for macro, args in calls:
        if macro in _INPUTS or macro in _OUTPUTS:
            _arity(macro, args, 2, what)
            name, type_text = args
            if type_text.startswith('"'):
                type_vars[name] = json.loads(type_text)
            else:
                dtypes[name] = dtypes_of(type_words(type_text), f"{what}.{name}")
            if macro in _INPUTS:
                inputs.append(Input(name, _INPUTS[macro]))
            else:
                outputs.append(Output(name, _OUTPUTS[macro]))
        elif macro == "DATATYPE":
            _arity(macro, args, 2, what)
            declared[args[0]] = dtypes_of(type_words(args[1]), f"{what}.{args[0]}")
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
    ir = IrDef(op_type, inputs, outputs, attrs)
    names = ir.tensor_names
    formats = {n: ("ND",) * len(dtypes[n]) for n in names}
    return CannOp(ir, {n: dtypes[n] for n in names}, formats, type_vars, rows=False)


def _arity(macro: str, args: list, count: int, what: str) -> None:
    if len(args) != count:
        raise SpecError(f"{what}: .{macro} takes {count} arguments, got {len(args)}")


def _reg_op_attr(args: list[str], what: str) -> Attr:
    # REG_OP attr types are case-sensitive in C++; CANN's own docs also write `int`.
    row = {k.lower(): r for k, r in types.BY_REG_OP.items()}.get(args[1].lower())
    if row is None:
        known = ", ".join(types.BY_REG_OP)
        raise SpecError(f"{what}: attr type {args[1]!r} has no torch type; supported: {known}")
    default = None if len(args) == 2 else checked(parse_value(args[2], row, what), row, what)
    dtype = row.value_type == "VT_INT" and len(args) == 3 and args[2].startswith("DT_")
    return Attr(args[0], row.attr_value_type, default, dtype=dtype)
