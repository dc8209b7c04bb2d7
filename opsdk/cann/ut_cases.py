"""Tiling cases from an op's own host unit tests: shapes, dtypes and attrs its TilingFunc
accepts by construction.

CANN's op repositories test each TilingFunc under ``<op>/tests/ut/op_host/`` with gtest
files that state the node in one of two forms: a ``gert::TilingContextPara("Op",
{inputs}, {outputs}, {attrs}, &compileInfo)`` handed to ``ExecuteTestCase``, or a
``gert::TilingContextFaker()`` chain (``.IrInstanceNum``, ``.InputShapes({&x_shape...})``
of ``gert::StorageShape`` variables, ``.NodeInputTd(i, dtype, format, format)``,
``.NodeAttrs({{"name", AnyValue::CreateFrom<T>(v)}...})``). :func:`read` finds those in
a test file's ``TEST``/``TEST_F`` bodies; a test expecting ``GRAPH_FAILED`` and a node
naming what this reader does not resolve (a value computed at run time, a parameterised
test's table) give no case. A node built in a helper function the test calls is read
with the helper's parameters bound to the call's arguments. :func:`cases` maps them onto
the op's definition (IR input order; the attrs by position, as GE's runtime attrs are
read by index, the others at their defaults) as :class:`~opsdk.cann.tiling.Case`,
smallest first: the cases a search tries before the definition's synthetic ones, which
miss the relations between tensors (gamma as x's last dims, an index tensor's range, a
rank the op needs).
"""

from __future__ import annotations

import ast
import contextlib
import math
import operator
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from opsdk._runtime import types
from opsdk.cann._model import CannOp
from opsdk.cann.infer.call import FORMATS, Given
from opsdk.cann.tiling.run import Case

__all__ = ["OwnCase", "cases", "elements", "folder_of", "read", "test_files"]

_TEST = re.compile(r"^[ \t]*TEST(?:_F)?\s*\(\s*\w+\s*,\s*(\w+)\s*\)\s*\{", re.M)
_OTHER_ARCH = re.compile(r"arch(?!22\b)\d+")  # another chip's tests (arch35: ascend950)
_DECLARED = re.compile(
    r"\b(?:gert::StorageShape|(?:std::)?(?:vector|initializer_list)<[\w:]+>|auto"
    r"|(?:std::)?string|(?:const(?:expr)?\s+)?(?:u?int(?:8|16|32|64)_t|int|size_t|float"
    r"|double|bool))\s+(\w+)(?:\[\w*\])?\s*(=\s*|(?=[({]))"
)
# a Faker test's host data of an input: SetConstInput(index, dtype, values, count, ...)
_CONST = re.compile(r"\bSetConstInput\(\s*(\d+)\s*,\s*[\w:]+\s*,\s*(\w+)\s*,\s*(\w+)\s*,")
_ANY = re.compile(r"AnyValue::CreateFrom(?:<\s*([\w:<>\s]+?)\s*>)?\s*\((.*)\)$", re.S)
_FLOAT = re.compile(r"-?(?:\d*\.\d*(?:[eE]-?\d+)?|\d+[eE]-?\d+)[fF]?")
_DEFINE = re.compile(r"^#define\s+(\w+)\s+(-?\w+)\s*$", re.M)
_FUNCTION = re.compile(r"^[\w:<>&*, \t]*?\b(\w+)\s*\(([^;{}]*?)\)\s*(?:const\s*)?\{", re.M)
_PACK = {
    "DT_INT64": "q",
    "DT_INT32": "i",
    "DT_INT16": "h",
    "DT_INT8": "b",
    "DT_UINT64": "Q",
    "DT_UINT32": "I",
    "DT_UINT8": "B",
    "DT_BOOL": "?",
    "DT_FLOAT": "f",
    "DT_DOUBLE": "d",
}
_ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.floordiv,  # C++ integer division
}


@dataclass(frozen=True)
class Tensor:
    """One tensor of a test's node: GE dtype name, origin shape, format, host data."""

    dtype: str
    shape: tuple[int, ...]
    format: str = "ND"
    data: tuple | None = None


@dataclass(frozen=True)
class OwnCase:
    """One node a test tiles and expects to succeed: its op type, the node's inputs and
    outputs in order, per IR input its instance count where the test states it, the
    attrs in order (name, value: the tiling reads them by index, whatever the test calls
    them), and where it is (``file:line test``)."""

    op_type: str
    inputs: tuple[Tensor | None, ...]  # None: an absent optional input (nullptr)
    outputs: tuple[Tensor | None, ...]
    attrs: tuple[tuple[str, object], ...]
    instances: tuple[int, ...] | None
    where: str


def folder_of(source: Path) -> Path:
    """The op's folder of one of its ``op_host`` sources (``op_host/arch22/x.cpp`` too):
    where its ``tests`` are."""
    host = next((p for p in source.parents if p.name == "op_host"), source.parent)
    return host.parent


def test_files(op_folder: Path) -> list[Path]:
    """The host tiling tests of the op in ``op_folder`` (``tests/**/*tiling*.cpp``, not
    another chip's arch folder or file)."""
    tests = op_folder / "tests"
    if not tests.is_dir():
        return []
    return sorted(
        path
        for path in tests.rglob("*tiling*.cpp")
        if not _OTHER_ARCH.search(path.relative_to(tests).as_posix())
    )


def read(path: Path) -> list[OwnCase]:
    """Every node ``path``'s tests tile expecting success, in file order: stated in the
    test's body, or in a helper function of the file the test calls (its parameters
    bound to the call's arguments)."""
    text = path.read_text(errors="replace")
    names = {**_variables(text), **dict(_DEFINE.findall(text))}  # a test's own come first
    helpers = _helpers(text)
    found = []
    for test in _TEST.finditer(text):
        body = _balanced(text, test.end() - 1)
        if "GRAPH_FAILED" in body or "EXPECT_NE(tiling_func" in body:
            continue  # a test of what the tiling refuses
        line = text.count("\n", 0, test.start()) + 1
        where = f"{path.name}:{line} {test[1]}"
        known = {**names, **_variables(body)}
        case = _case(body, known, where) or _through_helper(body, known, helpers, where)
        if case is not None:
            found.append(case)
    return found


def _through_helper(body: str, known: dict, helpers: dict, where: str) -> OwnCase | None:
    """The node a helper function builds for the test ``body`` calling it."""
    for name, (params, helper) in helpers.items():
        call = re.search(rf"\b{name}\s*\(", body)
        if call is None:
            continue
        try:
            args = _parse(body, call.end() - 1)[0]
        except ValueError:
            continue
        bound = {
            p: known.get(a, a) if isinstance(a, str) else a
            for p, a in zip(params, args, strict=False)
        }
        case = _case(helper, {**known, **bound, **_variables(helper)}, where)
        if case is not None:
            return case
    return None


def cases(op: CannOp, *op_folders: Path) -> list[Case]:
    """The op's own tested nodes as tiling cases of its definition, smallest first; from
    each of ``op_folders`` once (a kernel's op folder and its tiling's may differ: the
    foreach ops' tiling is shared, their tests are each op's)."""
    found = []
    for folder in dict.fromkeys(op_folders):
        for path in test_files(folder):
            for own in read(path):
                if own.op_type == op.ir.op_type:
                    case = _mapped(own, op)
                    if case is not None:
                        found.append(case)
    return sorted(found, key=elements)


def elements(case: Case) -> int:
    """How many elements the case's tensors hold: what launching its kernel costs."""
    given = [*(g for i in case.inputs for g in i), *case.outputs]
    return sum(math.prod(g.shape) for g in given)


def _case(body: str, names: dict, where: str) -> OwnCase | None:
    """The node ``body`` builds, or None where it builds none this reader resolves."""
    try:
        if "TilingContextPara" in body:
            return _para(body, names, where)
        if ".InputShapes(" in body:
            return _faker(body, names, where)
    except (
        ValueError,
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
        SyntaxError,
        RecursionError,
    ):
        return None  # a node this reader does not resolve
    return None


def _helpers(text: str) -> dict[str, tuple[list[str], str]]:
    """The file's functions (not tests) building a node: name, parameter names, body."""
    found = {}
    for defined in _FUNCTION.finditer(text):
        if defined[1] in ("TEST", "TEST_F", "TEST_P", "if", "for", "while", "switch"):
            continue
        body = _balanced(text, defined.end() - 1)
        if "TilingContextPara" in body or ".InputShapes(" in body:
            params = [_last_word(p) for p in _split(defined[2])]
            found[defined[1]] = (params, body)
    return found


def _split(params: str) -> list[str]:
    """A parameter list split at its top-level commas (not a template's)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(params):
        depth += char in "<([{"
        depth -= char in ">)]}"
        if char == "," and not depth:
            parts.append(params[start:i])
            start = i + 1
    return [*parts, params[start:]] if params.strip() else parts


def _last_word(param: str) -> str:
    return re.findall(r"\w+", param.split("=")[0])[-1]


def _para(body: str, names: dict, where: str) -> OwnCase:
    at = body.index("TilingContextPara")
    args = _parse(body, body.index("(", at))[0]
    op_type, inputs, outputs = (_resolved(a, names) for a in args[:3])
    attrs = _resolved(args[3], names) if len(args) > 3 else []
    attrs = attrs if isinstance(attrs, list) else []
    return OwnCase(
        _string(op_type),
        tuple(_tensor(t, names) for t in inputs),
        tuple(_tensor(t, names) for t in outputs),
        _attrs(attrs, names),
        None,
        where,
    )


def _tensor(value: list, names: dict) -> Tensor:
    """``{{origin, storage}, dtype, format[, is_const, data]}`` (each may be a name)."""
    shapes = _resolved(value[0], names)
    dtype, fmt = _dtype(_resolved(value[1], names)), _format(_resolved(value[2], names))
    data = None
    if len(value) > 4 and value[3] == "true":
        data = names[value[4].removesuffix(".data()")]
    return Tensor(dtype, _shape(shapes[0], names), fmt, _data(dtype, data, names))


def _data(dtype: str, values: list | None, names: dict) -> tuple | None:
    """A const input's values as its dtype makes them (None: no host data)."""
    if values is None:
        return None
    ctype = "float" if dtype in ("DT_FLOAT", "DT_DOUBLE") else "int64_t"
    return tuple(_scalar(ctype, v, names) for v in values)


def _faker(body: str, names: dict, where: str) -> OwnCase:
    op_type = _op_type(body, names)
    inputs, outputs = (_call(body, m, names) for m in (".InputShapes(", ".OutputShapes("))
    tds = {}
    for kind, index, dtype, fmt in re.findall(
        r"\.Node(Input|Output)Td\(\s*(\d+)\s*,\s*([\w:]+)\s*,\s*([\w:]+)", body
    ):
        tds[kind, int(index)] = (_dtype(_resolved(dtype, names)), _format(_resolved(fmt, names)))

    consts = {
        int(index): names[values][: _int(count, names)]
        for index, values, count in _CONST.findall(body)
    }

    def tensors(shapes: list, kind: str) -> tuple[Tensor | None, ...]:
        made: list[Tensor | None] = []
        for i, shape in enumerate(shapes):
            stated = _resolved(shape, names)  # a StorageShape: origin and storage shapes
            if stated == "nullptr":  # an absent optional input
                made.append(None)
                continue
            dtype, fmt = tds[kind, i]  # a tensor whose dtype the test leaves unset: no case
            data = consts.get(i) if kind == "Input" else None
            made.append(Tensor(dtype, _shape(stated[0], names), fmt, _data(dtype, data, names)))
        return tuple(made)

    attrs = _call(body, ".NodeAttrs(", names) if ".NodeAttrs(" in body else []
    counts = _call(body, ".IrInstanceNum(", names) if ".IrInstanceNum(" in body else None
    return OwnCase(
        op_type,
        tensors(inputs, "Input"),
        tensors(outputs, "Output"),
        _attrs(attrs, names),
        tuple(_int(c, names) for c in counts) if counts else None,
        where,
    )


def _op_type(body: str, names: dict) -> str:
    """The op type a Faker test asks the registry for (``GetOpImpl(...)``'s argument),
    else its fixture's ``opType``."""
    asked = re.search(r"GetOpImpl\(\s*([^)]+?)(?:\.c_str\(\))?\s*\)", body)
    value = _resolved(asked[1] if asked else "opType", names)
    return _string(value[0] if isinstance(value, list) else value)


def _call(body: str, method: str, names: dict) -> list:
    """The first argument of ``method``'s (first) call in ``body``."""
    args = _parse(body, body.index(method) + len(method) - 1)[0]
    return _resolved(args[0], names)


def _resolved(value, names: dict):
    """``value``, or what the name (``&name``) it is stands for (a helper's parameter
    may be bound to a name of the test's own: followed once each)."""
    seen = set()
    while isinstance(value, str) and value.lstrip("&") in names and value not in seen:
        seen.add(value)
        value = names[value.lstrip("&")]
    return value


def _attrs(pairs: list, names: dict) -> tuple[tuple[str, object], ...]:
    """``{"name", AnyValue::CreateFrom<T>(v)}`` pairs, or ``OpAttr("name", ...)`` calls."""
    found = []
    for pair in pairs:
        pair = _resolved(pair, names)
        if isinstance(pair, str) and "OpAttr(" in pair:
            pair = _parse(pair, pair.index("OpAttr(") + 6)[0]
        value = _resolved(pair[1], names)
        made = _ANY.search(value) if isinstance(value, str) else None
        if made is None:
            raise ValueError(f"attr {pair!r}")
        found.append((_string(_resolved(pair[0], names)), _any(made[1], made[2], names)))
    return tuple(found)


def _any(ctype: str | None, text: str, names: dict):
    """``AnyValue::CreateFrom<ctype>(text)`` as a Python value of the type it makes (of
    the literal's type where no ``ctype`` is written)."""
    value = _resolved(_parse("(" + text + ")", 0)[0][0], names)
    if ctype is None:
        ctype = _literal_type(value)
    if "vector" in ctype:
        vector = re.search(r"vector<\s*([\w:]+)", ctype)
        if vector is None:
            raise ValueError(f"not a vector type: {ctype}")
        inner = vector[1]
        return tuple(_scalar(inner, v, names) for v in value)
    return _scalar(ctype, value, names)


def _literal_type(value) -> str:
    if isinstance(value, list):
        return "std::vector<" + _literal_type(value[0] if value else "0") + ">"
    if value in ("true", "false"):
        return "bool"
    if value.startswith('"'):
        return "std::string"
    return "float" if _FLOAT.fullmatch(value) else "int64_t"


def _scalar(ctype: str, value, names: dict):
    value = _resolved(value, names)
    if "string" in ctype or ctype.startswith("char"):
        return _string(value)
    if ctype == "bool":
        return value == "true"
    if ctype in ("float", "double"):
        return float(value.rstrip("fF"))
    return _int(value, names)


def _dtype(atom: str) -> str:
    name = atom.rpartition("::")[2]
    if name not in types.DTYPES:
        raise ValueError(f"dtype {atom}")
    return name


def _format(atom: str) -> str:
    name = atom.rpartition("::")[2].removeprefix("FORMAT_")
    return name if name in FORMATS else "ND"


def _shape(dims, names: dict) -> tuple[int, ...]:
    return tuple(_int(d, names) for d in _resolved(dims, names))


def _int(atom, names: dict) -> int:
    """An integer literal, a named constant of the test or arithmetic of these."""
    if isinstance(atom, int):
        return atom
    text = re.sub(r"(?<=\d)[uUlL]+\b", "", atom)
    return _evaluate(ast.parse(text, mode="eval").body, names)


def _evaluate(node, names: dict) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        value = _resolved(node.id, names)
        if value == node.id:
            raise ValueError(f"unknown {value}")
        return _int(value, names)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):  # a vector's
        return _int(names[node.value.id][_evaluate(node.slice, names)], names)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, names)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        return _ARITHMETIC[type(node.op)](_evaluate(node.left, names), _evaluate(node.right, names))
    raise ValueError(ast.dump(node))


def _string(atom) -> str:
    if not isinstance(atom, str) or not (atom.startswith('"') and atom.endswith('"')):
        raise ValueError(f"not a string: {atom}")
    return atom[1:-1]


def _variables(body: str) -> dict:
    """The body's StorageShapes, vectors and numbers, by name (their parsed values)."""
    names: dict[str, object] = {}
    for declared in _DECLARED.finditer(body):
        start = declared.end()
        if body[start] in "({":
            with contextlib.suppress(ValueError):  # not a value this reader parses
                names[declared[1]] = _parse(body, start)[0]
        else:
            names[declared[1]] = body[start : body.find(";", start)].strip()
    return names


def _balanced(text: str, start: int) -> str:
    """The text of the bracketed block opening at ``start`` ("" where it does not close
    as this reader parses it: no case from it)."""
    try:
        return text[start : _parse(text, start)[1]]
    except ValueError:
        return ""


def _parse(text: str, start: int) -> tuple[list, int]:
    """The ``{...}`` or ``(...)`` list opening at ``start`` as nested lists of atom
    strings (literals, names, calls), and where it ends."""
    close = {"{": "}", "(": ")"}[text[start]]
    items: list = []
    atom: list[str] = []
    depth = 0  # brackets inside an atom (a call's arguments)
    pos = start + 1
    while pos < len(text):
        char = text[pos]
        if char == '"':
            end = text.index('"', pos + 1)
            while text[end - 1] == "\\":
                end = text.index('"', end + 1)
            atom.append(text[pos : end + 1])
            pos = end + 1
            continue
        if text.startswith("//", pos):
            pos = text.index("\n", pos)
            continue
        if char == "{" and not depth and not "".join(atom).strip():
            value, pos = _parse(text, pos)
            items.append(value)
            atom = []
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        elif char in ",}" + close and not depth:
            word = "".join(atom).strip()
            if word:
                items.append(word)
            atom = []
            if char == close:
                return items, pos + 1
            pos += 1
            continue
        atom.append(char)
        pos += 1
    raise ValueError("unbalanced")


def _mapped(own: OwnCase, op: CannOp) -> Case | None:
    """``own`` as a case of ``op``'s definition: the node's inputs over its IR inputs
    (the test's instance counts, else one each with absent optional ones last), its
    attrs the first IR attrs, the others' defaults after; None where they do not fit."""
    ir = op.ir
    stated = own.inputs
    counts: Sequence[int] | None = own.instances
    if counts is None or len(counts) != len(ir.inputs):  # none, or not per IR input
        counts = _counts(ir.inputs, len(stated))  # (DeepNormGrad's tests say {6})
    if counts is None or len(counts) != len(ir.inputs) or sum(counts) != len(stated):
        return None
    inputs, at = [], 0
    for count in counts:
        inputs.append(tuple(_given(t) for t in stated[at : at + count] if t is not None))
        at += count
    outputs = tuple(_given(t) for t in own.outputs if t is not None)
    if len(outputs) < len(ir.outputs):
        return None
    if len(own.attrs) > len(ir.attrs):
        return None
    attrs = (*(v for _, v in own.attrs), *(a.default for a in ir.attrs[len(own.attrs) :]))
    case = Case(tuple(inputs), outputs, attrs)
    return replace(case, label=f"{own.where}: {case}")


def _counts(inputs, given: int) -> list[int] | None:
    """One instance per IR input, the optional ones past the node's inputs absent, a
    single dynamic input taking what is left."""
    dynamic = [i for i, x in enumerate(inputs) if x.kind == "dynamic"]
    if len(dynamic) == 1:
        counts = [1] * len(inputs)
        counts[dynamic[0]] = given - (len(inputs) - 1)
        return counts if counts[dynamic[0]] >= 0 else None
    if dynamic or given > len(inputs):
        return None
    if any(x.kind != "optional" for x in inputs[given:]):
        return None
    return [1] * given + [0] * (len(inputs) - given)


def _given(tensor: Tensor) -> Given:
    data = None
    if tensor.data is not None:
        pack = _PACK.get(tensor.dtype)
        if pack is None:
            raise ValueError(f"host data of {tensor.dtype}")
        data = struct.pack(f"<{len(tensor.data)}{pack}", *tensor.data)
    dtype = types.DTYPES[tensor.dtype].value
    return Given(dtype, tensor.shape, data, tensor.format, depend=data is not None)
