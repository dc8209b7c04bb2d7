"""AscendC ``OpDef`` code: the ``op_host/<op>_def.cpp`` an AscendC op project declares its op in.

``class X : public OpDef`` with ``OP_ADD(X)`` registers op type ``X``; its constructor
builds the definition through CANN's API (``register/op_def.h``). The file is run, not
pattern-matched (:mod:`.cpp`): constants, helpers, templates, configs, macros and loops
evaluate as C++ would, with CANN's objects as Python ones below. What the evaluator
cannot read is refused in one line naming the construct and its ``file:line``.

The prototype is the op as CANN builds it for one chip (``OpDef::GetMergeInputs``):

- the OpDef's own inputs, outputs and attrs, declared in the constructor or in the
  helpers it passes ``*this`` to;
- merged with the ``OpAICoreConfig`` that ``AICore().AddConfig(chip, config)`` attaches
  for that chip: a config tensor of an existing name overrides what it states (its param
  type, data types, formats...), a new name is appended;
- the chip is ``ascend910b``, else ``ascend910_93`` (the Atlas A2/A3 chips torch_npu
  runs on), else the first chip ``AddConfig`` names; without ``AddConfig``, the OpDef's
  own declarations. So an op that declares its tensors only per chip
  (``FlashAttentionScore``) reads as that chip declares them, and placeholders an op
  states for every chip and a chip's config replaces (``ge::DT_MAX``) are gone.

Data types and formats are CANN's rows (``OpDef::FullPermutation``): column i of every
``DataType``/``Format`` list is one row; a ``DataTypeList``/``FormatList`` tensor takes
each of its values with every row; a ``.Scalar()``/``.ScalarList()`` input ``.To(ge::DT_X)``
is ``DT_X``, ``.To("input")`` that input's type; scalar and ``ValueDepend`` inputs are
``ND``; ``.Follow("x"[, FollowType::...])`` takes x's data types and/or formats. An
output named like an input is that input written in place (a ref output).

Attrs: ``.AttrType(OPTIONAL)`` makes an attr optional (none: required, its value
ignored, as opbuild's ``REQUIRED_ATTR``); an optional attr's setter without a value
(``.Int()``) defaults to CANN's initial value (0, 0.0, false, "", an empty list); an
attr with no setter is a ``Bool``, CANN's initial type. ``.Int(ge::DT_INT64)`` is an
Int whose default is GE's number of that type. What is not the prototype (``SetTiling``,
``SetInferShape``, flags, ``ExtendCfgInfo``, ``MC2()``, ``InitValue``, contiguity,
``Version``, comments) is read and left.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from opsdk._runtime import types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import cpp, files
from opsdk.cann._model import CannOp, CannWarning
from opsdk.cann.cpp import CppError, Native, Sym, Tok, Unknown
from opsdk.errors import SpecError

__all__ = ["is_opdef", "read", "resolver"]

# The chips whose view of an op is its prototype, in order of preference.
PREFERRED_CHIPS = ("ascend910b", "ascend910_93")
# What a refusal asks: the file and line it names are what to change (opsdk reads OpDef as
# CANN's build does); another format is the way around a construct opsdk cannot read.
_REFUSAL = "change that line, or give the op as msopgen JSON or REG_OP"
_OPTIONS = {"IGNORE", "OPTIONAL", "REQUIRED", "DYNAMIC", "VIRTUAL"}
# CANN's enum classes whose values a file passes (register/op_def.h).
_ENUMS = {
    "DependScope", "FollowType", "CommentSection", "FormatCheckOption", "ScalarType",
    "HcclServerType", "InitValueType", "AttrDataType",
}  # fmt: skip
_PARAM_KINDS = {"REQUIRED": "required", "OPTIONAL": "optional", "DYNAMIC": "dynamic"}
# The list-stating OpParamDef methods: (field, its status field, the form, the words' prefix).
_LISTS = {
    "DataType": ("types", "types_status", "value", "DT_"),
    "DataTypeList": ("types_list", "types_status", "list", "DT_"),
    "Format": ("formats", "formats_status", "value", "FORMAT_"),
    "FormatList": ("formats_list", "formats_status", "list", "FORMAT_"),
}
# The OpAttrDef setter of each REG_OP attr type (opbuild writes the setter's name).
_ATTR_SETTERS = {
    "Bool",
    "Float",
    "Int",
    "String",
    "ListBool",
    "ListFloat",
    "ListInt",
    "ListListInt",
}
# CANN's initial value of each attr type (OpAttrDefImpl): an optional attr's default
# when its setter is given no value.
_INITIAL = {"Bool": False, "Float": 0.0, "Int": 0, "String": "", "ListBool": [],
            "ListFloat": [], "ListInt": [], "ListListInt": []}  # fmt: skip


def is_opdef(text: str) -> bool:
    """Whether ``text`` is AscendC OpDef code rather than another CANN format."""
    return "OP_ADD(" in text or (": public OpDef" in text and "REG_OP(" not in text)


def resolver(path: Path):
    """How ``#include "..."`` of the file at ``path`` finds the project's own headers:
    relative to the including file, as the compiler's quoted form does first."""

    def resolve(include: str, from_file: str):
        candidate = Path(from_file).parent / include
        return (files.head(candidate), str(candidate)) if candidate.is_file() else None

    return resolve


def read(text: str, where: str, wanted, resolve=None) -> list[CannOp]:
    """Every op ``OP_ADD`` registers in the OpDef code ``text`` (of the file ``where``)."""
    try:
        program = cpp.Program(cpp.preprocess(text, where, resolve), where)
        ops = []
        for op_type, tok in program.op_adds:
            if wanted is None or op_type in wanted:
                ops.append(_read_op(program, op_type, tok))
        return ops
    except CppError as err:
        raise SpecError(f"{err}; {_REFUSAL}") from None


# --------------------------------------------------------------------------- CANN's objects


def _fail(site: Tok, what: str) -> NoReturn:
    raise CppError(site.file, site.line, what)


def _symbol(qualname: str):
    """CANN's constants: data types (with GE's number), formats, options, enum values."""
    parts = qualname.split("::")
    name = parts[-1]
    if name.startswith("DT_"):
        row = types.dtype(name)
        return Sym(row.ge if row is not None else name, row.value if row is not None else None)
    if name.startswith("FORMAT_"):
        return Sym(name)
    if name in _OPTIONS and all(p in ("ops", "Option", "") for p in parts[:-1]):
        return Sym(name)
    if len(parts) > 1 and parts[-2] in _ENUMS:
        return Sym(f"{parts[-2]}::{name}")
    return None


def _construct(type_name: str, args: list, site: Tok):
    if type_name == "OpAICoreConfig":
        return _Config()
    if type_name == "ScalarVar":
        return _Opaque("ScalarVar")
    return None


class _Opaque(Native):
    """A CANN object that is not the prototype (``MC2()``, ``AICPU()``): any call is read."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def call(self, method, args, site):
        return self


@dataclass(eq=False)
class _Param(Native):
    """An ``OpParamDef``: what ``Input("x")``/``Output("y")`` chains state."""

    name: str
    output: bool
    site: Tok
    kind: str | None = None  # REQUIRED OPTIONAL DYNAMIC IGNORE VIRTUAL; None: unset
    types: list[str] = field(default_factory=list)
    types_list: list[str] = field(default_factory=list)
    types_status: str | None = None  # "value" (DataType) or "list" (DataTypeList)
    formats: list[str] = field(default_factory=list)
    formats_list: list[str] = field(default_factory=list)
    formats_status: str | None = None
    value_depend: bool | str = False  # or the option: "required", "optional"
    scalar: str | None = None  # "scalar" or "scalar_list"
    to_type: str | None = None
    to_name: str | None = None
    follow: tuple[str, str] | None = None  # (name, FollowType)
    depends_on_compute: bool = False
    version: int = 0  # .Version(n): in the aclnn API aclnn<Op>V<n>, not the base one
    init_value: float | None = None  # .InitValue(v) of a number: the output starts as v

    type_name = "OpParamDef"

    def call(self, method, args, site):
        if method in _LISTS:
            self._declare(method, args, site)
            return self
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            _fail(site, f"cannot read the OpParamDef method .{method}() of {self.name!r}")
        handler(args, site)
        return self

    def _m_ParamType(self, args, site):
        self.kind = _option(args, site, "ParamType")

    def _declare(self, method: str, args, site) -> None:
        """``DataType``/``Format`` (a value per row) or their ``...List`` (every value
        with every row): CANN refuses a tensor stating both forms of one."""
        values, status, form, prefix = _LISTS[method]
        if getattr(self, status) not in (None, form):
            other = method.removesuffix("List") + ("List" if form == "value" else "")
            _fail(site, f"cannot read {self.name!r} declaring both {other} and {method}")
        words = [_word(v, site, method, prefix) for v in _one_list(args, site, method)]
        setattr(self, values, words)
        setattr(self, status, form)

    def _m_ValueDepend(self, args, site):
        option = _option(args[:1], site, "ValueDepend")
        self.value_depend = option.lower() if option in ("REQUIRED", "OPTIONAL") else False

    def _m_Scalar(self, args, site):
        self.scalar = "scalar"

    def _m_ScalarList(self, args, site):
        self.scalar = "scalar_list"

    def _m_To(self, args, site):
        value = args[0] if len(args) == 1 else None
        if isinstance(value, str):
            self.to_name = value
        elif isinstance(value, Sym) and value.name.startswith("DT_"):
            self.to_type = value.name
        else:
            _fail(site, f"cannot read .To() of {self.name!r}: give a ge::DT_* or an input name")

    def _m_Follow(self, args, site):
        if not args or not isinstance(args[0], str):
            _fail(site, f"cannot read .Follow() of {self.name!r}: give the followed name")
        how = args[1].name.split("::")[-1] if len(args) > 1 and isinstance(args[1], Sym) else "ALL"
        self.follow = (args[0], how)

    def _m_OutputShapeDependOnCompute(self, args, site):
        self.depends_on_compute = True

    def _tolerated(self, args, site):
        """Not the prototype: how the kernel is built or its memory initialised."""

    def _m_Version(self, args, site):
        self.version = _version(args)

    _m_UnknownShapeFormat = _m_AutoContiguous = _m_IgnoreContiguous = _tolerated
    _m_Comment = _m_DataTypeForBinQuery = _m_FormatForBinQuery = _tolerated

    def _m_InitValue(self, args, site):
        """A number: the output's start (other forms, per-dtype values, are tolerated)."""
        if args and isinstance(args[0], int | float) and not isinstance(args[0], bool):
            self.init_value = float(args[0])

    def merge(self, other: _Param) -> None:
        """``OpParamDef::MergeParam``: what a chip's config states over the op's own."""
        self.kind = other.kind
        for name in ("types", "types_list", "formats", "formats_list"):
            if getattr(other, name):
                setattr(self, name, list(getattr(other, name)))
        self.value_depend = self.value_depend or other.value_depend
        for name in ("types_status", "formats_status", "scalar", "to_type", "to_name",
                     "follow", "depends_on_compute", "version"):  # fmt: skip
            setattr(self, name, getattr(other, name))


@dataclass(eq=False)
class _AttrDef(Native):
    """An ``OpAttrDef``: ``Attr("a").AttrType(OPTIONAL).Float(1e-6)``."""

    name: str
    site: Tok
    required: bool = True
    setter: str = "Bool"  # CANN's initial type
    value: object = None  # None: the setter's initial value
    dtype: bool = False  # an Int set to a ge::DT_* (a data type, as GE's number)
    version: int = 0  # .Version(n), as for an OpParamDef

    type_name = "OpAttrDef"

    def call(self, method, args, site):
        if method == "AttrType":
            self.required = _option(args, site, "AttrType") != "OPTIONAL"
        elif method in _ATTR_SETTERS:
            self.setter = method
            self.value = _attr_value(method, args[0], site, self.name) if args else None
            self.dtype = method == "Int" and bool(args) and _is_dtype(args[0])
        elif method == "Version":
            self.version = _version(args)
        elif method != "Comment":
            _fail(site, f"cannot read the OpAttrDef method .{method}() of {self.name!r}")
        return self


class _Trunk(Native):
    """What declares tensors: ``OpDef`` and ``OpAICoreConfig`` (CANN's ``OpParamTrunk``)."""

    def __init__(self):
        self.inputs: list[_Param] = []
        self.outputs: list[_Param] = []

    def param(self, args, site, output: bool) -> _Param:
        if len(args) != 1 or not isinstance(args[0], str):
            what = "Output" if output else "Input"
            _fail(site, f"cannot read {what}({_shown(args)}): give the tensor's name")
        params = self.outputs if output else self.inputs
        found = next((p for p in params if p.name == args[0]), None)
        if found is None:
            found = _Param(args[0], output, site)
            params.append(found)
        return found


class _Config(_Trunk):
    type_name = "OpAICoreConfig"

    def call(self, method, args, site):
        if method in ("Input", "Output"):
            return self.param(args, site, method == "Output")
        return self  # compile flags, ExtendCfgInfo: how the kernel is built


class _AICore(Native):
    type_name = "OpAICoreDef"

    def __init__(self):
        self.configs: list[tuple[str, _Config | None]] = []

    def call(self, method, args, site):
        if method == "AddConfig":
            if not args or not isinstance(args[0], str):
                _fail(site, f"cannot read AddConfig({_shown(args)}): give the chip's name")
            config = args[1] if len(args) > 1 else None
            if config is not None and not isinstance(config, _Config):
                _fail(site, f"cannot read AddConfig's config {_shown(args[1:])}")
            self.configs.append((args[0], None if config is None else config.copy()))
        return self  # SetTiling, SetCheckSupport, ...: not the prototype


class _OpDef(_Trunk):
    type_name = "OpDef"

    def __init__(self):
        super().__init__()
        self.attrs: list[_AttrDef] = []
        self.aicore = _AICore()

    def call(self, method, args, site):
        if method in ("Input", "Output"):
            return self.param(args, site, method == "Output")
        if method == "Attr":
            if len(args) != 1 or not isinstance(args[0], str):
                _fail(site, f"cannot read Attr({_shown(args)}): give the attr's name")
            found = next((a for a in self.attrs if a.name == args[0]), None)
            if found is None:
                found = _AttrDef(args[0], site)
                self.attrs.append(found)
            return found
        if method == "AICore":
            return self.aicore
        if method in ("MC2", "AICPU", "HostCPU"):
            return _Opaque(f"Op{method}Def")
        return self  # SetInferShape, SetInferDataType, Comment, FormatMatchMode, ...


def _shown(args) -> str:
    return ", ".join(cpp.describe(a) if not isinstance(a, str) else repr(a) for a in args)


def _option(args, site, method) -> str:
    value = args[0] if args else None
    if isinstance(value, Unknown):
        raise value.error()
    if not isinstance(value, Sym) or value.name not in _OPTIONS:
        _fail(site, f"cannot read {method}({_shown(args)}): give REQUIRED, OPTIONAL or DYNAMIC")
    return value.name


def _one_list(args, site, method) -> list:
    if args and isinstance(args[0], Unknown):
        raise args[0].error()
    if len(args) != 1 or not isinstance(args[0], list):
        _fail(site, f"cannot read {method}({_shown(args)}): give a list")
    if len(args[0]) == 1 and isinstance(args[0][0], list):
        return args[0][0]  # .Format({formats}): the vector copy-constructed
    return args[0]


def _word(value, site, method, prefix) -> str:
    if isinstance(value, Unknown):
        raise value.error()
    if not isinstance(value, Sym) or not value.name.startswith(prefix):
        _fail(site, f"cannot read {cpp.describe(value)} in {method}: give ge::{prefix}* values")
    return value.name


def _attr_value(setter: str, value, site: Tok, name: str):
    """A setter's argument as the IR holds it (a data type as GE's number)."""
    element = setter.removeprefix("List")
    if setter.startswith("List"):
        if not isinstance(value, list):
            _fail(site, f"cannot read attr {name!r}: {setter} takes a list")
        if setter == "ListListInt":
            return [_attr_value("ListInt", v, site, name) for v in value]
        return [_attr_value(element, v, site, name) for v in value]
    if isinstance(value, Unknown):
        raise value.error()
    if isinstance(value, Sym) and element == "Int" and value.value is not None:
        return value.value
    if element == "Int" and isinstance(value, float):
        return int(value)  # C++ converts the argument to int64_t
    kinds: dict[str, type | tuple[type, ...]]
    kinds = {"Int": int, "Float": (int, float), "Bool": (bool, int), "String": str}
    if not isinstance(value, kinds[element]):
        _fail(site, f"cannot read attr {name!r}: {setter}({cpp.describe(value)})")
    if element == "Float" and isinstance(value, (int, float)):  # held to kinds just above
        return float(value)
    if element == "Bool":
        return bool(value)
    return value


# --------------------------------------------------------------------------- the prototype


def _read_op(program: cpp.Program, op_type: str, site: Tok) -> CannOp:
    cls = program.classes.get(op_type)
    if cls is None:
        _fail(site, f"cannot read OP_ADD({op_type}): no class {op_type} in this file")
    if cls.bases != ["OpDef"]:
        bases = ", ".join(cls.bases) or "nothing"
        _fail(cls.tok, f"cannot read class {op_type} deriving from {bases} (not OpDef)")
    op = _OpDef()
    cpp.Interpreter(program, _symbol, _construct).construct(cls, op, op_type)
    chip, config = _chosen(op.aicore.configs)
    inputs = _merged(op.inputs, config.inputs if config else [])
    outputs = _merged(op.outputs, config.outputs if config else [])
    _follow(inputs, outputs)
    params = inputs + outputs
    rows = _rows(params, op_type, chip)
    by_input = {p.name: k for k, p in enumerate(inputs)}
    for k, param in enumerate(params):
        if param.to_name is not None:  # To("input"): that input's data types
            if param.to_name not in by_input:
                _fail(param.site, f"cannot read .To({param.to_name!r}): no such input")
            rows[k] = (rows[by_input[param.to_name]][0], rows[k][1])
        if param.follow is not None and param.follow[1] != "SHAPE":
            target = rows[by_input[param.follow[0]]]
            rows[k] = (
                target[0] if param.follow[1] != "FORMAT" else rows[k][0],
                target[1] if param.follow[1] != "DTYPE" else rows[k][1],
            )
    kept = [k for k, p in enumerate(params) if _kind(p) in _PARAM_KINDS]
    ir = IrDef(
        op_type,
        [_ir_input(params[k]) for k in kept if not params[k].output],
        [_ir_output(params[k], op_type) for k in kept if params[k].output],
        [_ir_attr(a) for a in op.attrs],
    )
    dtypes, formats = {}, {}
    for k in reversed(kept):  # a ref output's name is its input's: the input's rows
        dtypes[params[k].name] = tuple(_ge(d, params[k], chip) for d in rows[k][0])
        formats[params[k].name] = tuple(f.removeprefix("FORMAT_") for f in rows[k][1])
    names = list(ir.tensor_names)
    versioned: list[_Param | _AttrDef] = [*(params[k] for k in kept), *op.attrs]
    versions = {x.name: x.version for x in versioned if x.version}
    chips = tuple(dict.fromkeys(c for c, _ in op.aicore.configs))
    starts = {params[k].name: params[k].init_value for k in kept if params[k].output}
    return CannOp(
        ir,
        {n: dtypes[n] for n in names},
        {n: formats[n] for n in names},
        versions=versions,
        chips=chips,
        init_values={n: v for n, v in starts.items() if v is not None},
    )


def _version(args) -> int:
    """``.Version(n)``'s n (a constant the file names is evaluated; anything else is 1)."""
    return args[0] if args and isinstance(args[0], int) and args[0] > 0 else 1


def _kind(param: _Param) -> str:
    return param.kind or "REQUIRED"  # CANN's default param type


def _chosen(configs: list[tuple[str, _Config | None]]):
    """The chip whose view is the prototype, and its config (None: the op's own)."""
    if not configs:
        return None, None
    by_chip = dict(configs)  # a chip added twice keeps its last config, as CANN's map does
    chip = next((c for c in PREFERRED_CHIPS if c in by_chip), configs[0][0])
    return chip, by_chip[chip]


def _merged(own: list[_Param], config: list[_Param]) -> list[_Param]:
    out = [p.copy() for p in own]
    for extra in config:
        found = next((p for p in out if p.name == extra.name), None)
        if found is None:
            out.append(extra.copy())
        else:
            found.merge(extra)
    return out


def _follow(inputs: list[_Param], outputs: list[_Param]) -> None:
    """``Follow``: a tensor takes the data types and/or formats of the input it names
    (through chains of followers, which must follow the same way)."""
    by_input = {p.name: p for p in inputs}
    for param in inputs + outputs:
        if param.follow is None:
            continue
        name, how = param.follow
        seen = {param.name} if not param.output else set()
        target = by_input.get(name)
        while target is not None and target.follow is not None and target.follow[0] != name:
            if target.name in seen or target.follow[1] != how:
                _fail(param.site, f"cannot read the Follow chain of {param.name!r}")
            seen.add(target.name)
            name = target.follow[0]
            target = by_input.get(name)
        if target is None or (target is param):
            _fail(param.site, f"cannot read .Follow({param.follow[0]!r}): no such input")
        param.follow = (target.name, how)
        if how in ("ALL", "DTYPE") and target.types_status is not None:
            param.types_status = target.types_status
            param.types = list(target.types)
            param.types_list = target.types_list[:1]
        if how in ("ALL", "FORMAT") and target.formats_status is not None:
            param.formats_status = target.formats_status
            param.formats = list(target.formats)
            param.formats_list = target.formats_list[:1]


def _rows(params: list[_Param], op_type: str, chip: str | None) -> list[tuple[list, list]]:
    """Each tensor's data types and formats, row by row (``OpDef::FullPermutation``)."""
    for p in params:  # OpDef::SetDefaultND
        if not p.formats and not p.formats_list:
            p.formats_status, p.formats_list = "list", ["FORMAT_ND"]
    lengths: dict[int, _Param] = {}
    for p in params:
        if p.types_status == "value" and not (p.scalar and (p.to_type or p.to_name)):
            lengths.setdefault(len(p.types), p)
        if p.formats_status == "value" and not (p.scalar or p.value_depend):
            lengths.setdefault(len(p.formats), p)
    if len(lengths) > 1:
        shown = ", ".join(f"{p.name!r} {n}" for n, p in lengths.items())
        first = next(iter(lengths.values()))
        _fail(first.site, f"cannot read {op_type}'s rows: its lists differ in length ({shown})")
    for p in params:
        if p.types_status is None and not (p.scalar and (p.to_type or p.to_name)):
            on = f" for {chip}" if chip else ""
            _fail(p.site, f"cannot read {p.name!r}: it declares no DataType{on}")
    width = next(iter(lengths), 1)
    choices = []
    for p in params:
        dtypes: list | None
        fmts: list | None
        if p.scalar and (p.to_type or p.to_name):
            dtypes = [p.to_type or "DT_UNDEFINED"]  # To(name): that input's, set after
        elif p.types_status == "list":
            dtypes = [("list", v) for v in p.types_list]
        else:
            dtypes = None  # the column's
        if p.scalar or p.value_depend:
            fmts = ["FORMAT_ND"]
        elif p.formats_status == "list":
            fmts = [("list", v) for v in p.formats_list]
        else:
            fmts = None
        choices.append((p, dtypes, fmts))
    out: list[tuple[list, list]] = [([], []) for _ in params]
    for column in range(width):
        options = []
        for p, dtypes, fmts in choices:
            options.append(dtypes or [p.types[column]])
            options.append(fmts or [p.formats[column]])
        for row in itertools.product(*options):
            for k in range(len(choices)):
                out[k][0].append(_plain(row[2 * k]))
                out[k][1].append(_plain(row[2 * k + 1]))
    return out


def _plain(value) -> str:
    return value[1] if isinstance(value, tuple) else value


def _ge(word: str, param: _Param, chip: str | None) -> str:
    row = types.dtype(word)
    if row is None:
        on = f" for {chip}" if chip else ""
        _fail(param.site, f"cannot read {param.name!r}{on}: {word} is not a data type")
    return row.ge


def _ir_input(p: _Param) -> Input:
    return Input(p.name, _PARAM_KINDS[_kind(p)], p.value_depend, p.scalar)


def _ir_output(p: _Param, op_type: str) -> Output:
    kind = _PARAM_KINDS[_kind(p)]
    if kind == "optional":
        warnings.warn(
            f"{p.site.file}: {op_type}: output {p.name!r} is OPTIONAL; GE's prototype has "
            "no optional output, opbuild makes it required: so does opsdk",
            CannWarning,
            stacklevel=2,
        )
        kind = "required"
    if p.scalar:
        _fail(p.site, f"cannot read output {p.name!r} declared .{_SCALAR_METHOD[p.scalar]}()")
    return Output(p.name, kind, p.depends_on_compute)


_SCALAR_METHOD = {"scalar": "Scalar", "scalar_list": "ScalarList"}


def _is_dtype(value) -> bool:
    return isinstance(value, Sym) and value.name.split("::")[-1].startswith("DT_")


def _ir_attr(a: _AttrDef) -> Attr:
    if a.setter == "ListListInt":
        _fail(a.site, f"cannot read attr {a.name!r}: ListListInt has no GE IR or torch type")
    value_type = types.BY_REG_OP[a.setter].value_type
    if value_type is None:
        _fail(a.site, f"cannot read attr {a.name!r}: {a.setter} has no GE value type")
    if a.required:
        return Attr(a.name, value_type)
    value = _INITIAL[a.setter] if a.value is None else a.value
    return Attr(a.name, value_type, value, dtype=a.dtype)
