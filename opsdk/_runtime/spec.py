"""The op spec: one torch schema, parsed by torch, and everything derived from it.

Generators, converters, the harness and the GE stand-in all read an :class:`OpSchema`
instead of the schema (:func:`parse` for text, :func:`of` for a registered op, kept
once read), and find ops by qualname with :func:`resolve`, so the rules users trip on
(``(a!)`` marking, in-place ops returning nothing, reserved namespaces) are checked in
exactly one place.
"""

from __future__ import annotations

import keyword
import math
import re
import sys
from dataclasses import dataclass

import torch

from opsdk._runtime import types
from opsdk.errors import SpecError

RESERVED_NAMESPACES = frozenset({"aten", "prim", "prims", "torch", "_"})
# torch_npu's namespace: opsdk attaches graph-mode pieces to its ops, never defines new ones
# there (on an NPU host torch_npu's own definition would clash).
ATTACH_ONLY_NAMESPACES = frozenset({"npu"})
DEFAULT_NAMESPACE = "custom"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The most arguments a schema may have: the dispatcher keeps one bit per argument in a
# c10::utils::bitset, 64 bits (makeBitsetForDispatchArgs in torch's
# ATen/core/dispatch/DispatchKeyExtractor.h); ``define`` refuses more, so the package
# would not import.
MAX_ARGUMENTS = 64
# A number in a schema (not part of a name): what torch's parser reads with stoll/stod.
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# A hexadecimal integer, which torch's schema lexer reads as 0 (``int y=0x10`` -> ``y=0``).
_HEX_INT = re.compile(r"(?<![\w.])-?0[xX][0-9A-Fa-f]+(?![\w.])")


def default_schema(name: str, inplace: bool, returns_input: bool = False) -> str:
    """The schema `opsdk new` uses when none is given: an add, in place or not;
    ``returns_input``: in place by torch_npu's convention (``name_``, returning ``x``)."""
    if returns_input:
        return f"{name}(Tensor(a!) x, Tensor y) -> Tensor(a!)"
    if inplace:
        return f"{name}(Tensor(a!) x, Tensor y) -> ()"
    return f"{name}(Tensor x, Tensor y) -> Tensor"


def camel_case(name: str) -> str:
    """GE IR op type for a torch op name: ``my_add`` -> ``MyAdd``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def check_identifier(what: str, value: str) -> str:
    """Refuse names that cannot be a Python identifier in generated code."""
    if not _IDENTIFIER.match(value or ""):
        raise SpecError(
            f"{what} {value!r} is not a valid identifier: torch's schema parser takes ASCII "
            "letters, digits and '_' only, not starting with a digit (e.g. my_add)"
        )
    if keyword.iskeyword(value):
        raise SpecError(
            f"{what} {value!r} is a Python keyword: pick another name (e.g. {value}_op)"
        )
    if value.startswith("__"):
        raise SpecError(f"{what} {value!r} starts with '__', which Python reserves: drop it")
    return value


# Torch types whose ``str()`` is not their schema spelling (torch prints what they hold).
_SPELLED_AS = {"SymIntType": "SymInt", "NumberType": "Scalar"}


def _type_text(t) -> str:
    """Schema-language spelling of a parsed type (``SymInt[]``, ``Tensor?``...)."""
    kind = type(t).__name__
    if kind == "OptionalType":
        return _type_text(t.getElementType()) + "?"
    if kind == "ListType":
        return _type_text(t.getElementType()) + "[]"
    return _SPELLED_AS.get(kind, str(t))


@dataclass(frozen=True)
class Arg:
    """One schema argument, with what generators need to know about it."""

    name: str
    type: str  # schema spelling: "Tensor", "Tensor?", "Tensor[]", "int[]", "SymInt", ...
    mutated: bool
    kwarg_only: bool
    has_default: bool
    default: object = None
    size: int | None = None  # the N of ``int[N]``
    alias_set: str | None = None  # the ``a`` of ``(a)`` or ``(a!)``

    @property
    def aliased(self) -> bool:
        return self.alias_set is not None

    @property
    def is_tensor(self) -> bool:
        return self.type.startswith("Tensor")

    @property
    def is_optional(self) -> bool:
        return self.type.endswith("?")

    @property
    def is_list(self) -> bool:
        """``int[]``, ``Tensor[]``, and ``int[N]`` (N of them)."""
        return self.type.rstrip("?").endswith("]")

    @property
    def is_symbolic(self) -> bool:
        """``SymInt``, ``Scalar`` and their lists: may be symbolic under dynamic shapes."""
        row = types.row(self.type)
        return row is not None and row.symbolic


@dataclass(frozen=True)
class Return:
    name: str | None
    type: str
    alias_set: str | None = None  # the ``a`` of ``(a)`` or ``(a!)``

    @property
    def aliased(self) -> bool:
        return self.alias_set is not None


@dataclass(frozen=True)
class OpSchema:
    namespace: str
    name: str
    overload: str
    args: tuple[Arg, ...]
    returns: tuple[Return, ...]
    schema: str  # without namespace, as torch.library.define / custom_op take it

    @property
    def qualname(self) -> str:
        """``ns::name`` (plus ``.overload`` when there is one)."""
        base = f"{self.namespace}::{self.name}"
        return f"{base}.{self.overload}" if self.overload else base

    @property
    def overload_attr(self) -> str:
        """Attribute of the ``torch.ops.ns.name`` packet: ``default`` or the overload."""
        return self.overload or "default"

    @property
    def schema_args(self) -> str:
        """The schema without the op name, as ``custom_op(schema=...)`` takes it."""
        return self.schema[self.schema.index("(") :]

    @property
    def mutated_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.mutated)

    @property
    def fresh_returns(self) -> tuple[Return, ...]:
        """The returns that are new tensors, not a mutated argument handed back
        (torch_npu's ``Tensor(a!) self -> Tensor(a!)``)."""
        return tuple(r for r in self.returns if not r.aliased)

    @property
    def inplace(self) -> bool:
        return bool(self.mutated_args)

    @property
    def tensor_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.is_tensor)

    def by_name(self, args, kwargs) -> dict:
        """A call's arguments by schema name: ``args`` bind to the positional arguments
        in order; a keyword-only one is passed in ``kwargs``."""
        positional = [a.name for a in self.args if not a.kwarg_only]
        return dict(zip(positional, args, strict=False)) | dict(kwargs)

    @property
    def is_default_add(self) -> bool:
        """True for the schemas `opsdk new` writes a working add for."""
        return self.schema in (
            default_schema(self.name, inplace=False),
            default_schema(self.name, inplace=True),
            default_schema(self.name, inplace=True, returns_input=True),
        )

    def op(self):
        """The registered ``torch.ops`` overload (the package must be imported)."""
        return resolve(self.qualname)


def resolve(qualname: str):
    """The registered overload ``ns::name[.overload]`` names: the one lookup opsdk does."""
    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload or "default")
    except AttributeError:
        raise SpecError(
            f"torch op {qualname} is not registered (import the package that defines it)"
        ) from None


def registered_schemas(qualname: str) -> list:
    """The schemas the dispatcher holds for ``ns::name`` (every overload; none: the op
    is not defined, though a library may have registered kernels for it)."""
    return torch._C._jit_get_schemas_for_operator(qualname)


_OF: dict = {}


def of(op) -> OpSchema:
    """The spec of a registered overload, read from its schema once and kept: every
    reader of a registered op's schema asks here (unvalidated, so the harness can
    report a broken rule as a finding)."""
    spec = _OF.get(op)
    if spec is None:
        schema = op._schema
        _check_namespace(schema.name.partition("::")[0])
        spec = _OF[op] = _from_parsed(schema)
    return spec


def _split_name(text: str, name: str | None, namespace: str | None) -> tuple[str, str]:
    """Return (namespace, schema-with-name). Accepts ``ns::op(...)``, ``op(...)`` and ``(...)``."""
    text = " ".join(text.split())
    head, paren, _ = text.partition("(")
    if not paren:
        raise SpecError(
            f"schema {text!r} has no argument list: "
            f"write e.g. '{name or 'my_op'}(Tensor x) -> Tensor'"
        )
    head = head.strip()
    ns_in_schema, sep, op_name = head.rpartition("::")
    if not sep:
        op_name = head
    if not op_name:
        if name is None:
            raise SpecError("schema has no op name: write e.g. 'my_op(Tensor x) -> Tensor'")
        op_name = name
    base_name = op_name.split(".")[0]
    if name is not None and base_name != name:
        example = " ".join(f"{name}{text[text.index('(') :]}".split())  # one line
        raise SpecError(
            f"schema names the op {base_name!r} but the op is called {name!r}: "
            f"make them match (e.g. '{example}')"
        )
    if ns_in_schema and namespace and ns_in_schema != namespace:
        raise SpecError(
            f"schema namespace {ns_in_schema!r} differs from --namespace {namespace!r}: "
            "give one of them"
        )
    ns = ns_in_schema or namespace or DEFAULT_NAMESPACE
    return ns, op_name + text[text.index("(") :]


def parse(
    text: str, *, name: str | None = None, namespace: str | None = None, validate: bool = True
) -> OpSchema:
    """Parse and validate a schema; raise :class:`SpecError` with the fix on bad input.

    ``validate=False`` parses a schema that is already registered, so the harness
    can report a broken rule as a finding instead of refusing to look at the op.
    """
    ns, schema = _split_name(text, name, namespace)
    _check_namespace(ns)
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", schema)  # string defaults may be any text
    hexadecimal = _HEX_INT.search(unquoted)
    if hexadecimal:
        number = hexadecimal.group(0)
        raise SpecError(
            f"schema {schema!r}: torch's schema parser reads the hexadecimal {number} as 0: "
            f"write it in decimal ({int(number, 16)})"
        )
    try:
        parsed = torch._C.parse_schema(f"{ns}::{schema}")
    except IndexError:  # std::out_of_range from torch's stoll/stod: a default too large
        raise SpecError(f"schema {schema!r}: {_out_of_range(unquoted)}") from None
    except (RuntimeError, UnicodeError) as err:  # torch refuses non-ASCII text undecoded
        first = str(err).strip().splitlines()[0]
        non_ascii = re.findall(r"\w*[^\x00-\x7f]\w*", unquoted)
        fix = (
            f"torch's schema parser takes ASCII names only ({non_ascii[0]!r} is not)"
            if non_ascii
            else "write e.g. 'my_op(Tensor x, float alpha=1.0) -> Tensor'"
        )
        raise SpecError(f"schema {schema!r} does not parse ({first}): {fix}") from None
    spec = _from_parsed(parsed)
    if validate:
        validate_rules(spec)
    return spec


def _out_of_range(unquoted: str) -> str:
    """Which number of a schema torch could not hold (an int default beyond int64, a float
    one beyond a double's normal range), and the range it must be in."""
    for number in _NUMBER.findall(unquoted):
        if re.fullmatch(r"-?\d+", number):
            if not -(2**63) <= int(number) < 2**63:
                return (
                    f"the int default {number} does not fit int64: give one from "
                    f"{-(2**63)} to {2**63 - 1}"
                )
        elif (value := float(number)) and not sys.float_info.min <= abs(value) < math.inf:
            return (
                f"the float default {number} is out of a double's range: give one from "
                f"{sys.float_info.min:g} to {sys.float_info.max:g} in magnitude (or 0)"
            )
    return "a number in it is out of range: int defaults fit int64, float defaults a double"


def check_argument_count(count: int, what: str) -> None:
    """Refuse a schema of more arguments than PyTorch's dispatcher takes (:data:`MAX_ARGUMENTS`)."""
    if count > MAX_ARGUMENTS:
        raise SpecError(
            f"{what} has {count} arguments and PyTorch's dispatcher takes at most "
            f"{MAX_ARGUMENTS}: pass several tensors as one Tensor[] (or values as one int[])"
        )


def _check_namespace(ns: str) -> None:
    check_identifier("namespace", ns)
    if ns in RESERVED_NAMESPACES:
        raise SpecError(
            f"namespace {ns!r} is reserved for PyTorch's own ops: use your library's name "
            "(e.g. --namespace myops)"
        )


def _from_parsed(parsed) -> OpSchema:
    """The spec of a torch ``FunctionSchema`` (names checked, rules not)."""
    ns, op_name = parsed.name.split("::")
    check_identifier("op name", op_name)
    if parsed.overload_name:
        check_identifier("overload name", parsed.overload_name)
    args = tuple(_arg(a) for a in parsed.arguments)
    returns = tuple(
        Return(r.name or None, _type_text(r.real_type), _alias_set(r.alias_info))
        for r in parsed.returns
    )
    return OpSchema(ns, op_name, parsed.overload_name, args, returns, _printed(parsed, args))


def _printed(parsed, args: tuple[Arg, ...]) -> str:
    """The schema as torch prints it, without the op's namespace. torch prints an ``int``
    list default whose items are all equal as one number (aten's ``int[2] stride=1``),
    which it refuses to parse back for an unsized ``int[]``: such a default stays a list."""
    text = str(parsed).split("::", 1)[1]
    for a in args:
        if a.type == "int[]" and isinstance(a.default, list) and len(a.default) > 1:
            items = ", ".join(map(str, a.default))
            text = re.sub(
                rf"(?<=[(\s])int\[\] {a.name}=-?\d+(?=[,)])", f"int[] {a.name}=[{items}]", text
            )
    return text


def _arg(a) -> Arg:
    check_identifier("argument name", a.name)
    return Arg(
        name=a.name,
        type=_type_text(a.real_type).replace("[]", f"[{a.N}]", 1)
        if a.N
        else _type_text(a.real_type),
        mutated=bool(a.alias_info and a.alias_info.is_write),
        kwarg_only=a.kwarg_only,
        has_default=a.has_default_value(),
        default=a.default_value,
        size=a.N,
        alias_set=_alias_set(a.alias_info),
    )


def _alias_set(info) -> str | None:
    return next(iter(info.before_set), "").removeprefix("alias::") or None if info else None


def validate_rules(spec: OpSchema) -> None:
    """The rules an op must follow to be functionalizable (and so to enter a graph), and
    to be defined at all."""
    check_argument_count(len(spec.args), f"the schema of {spec.name}")
    names = [a.name for a in spec.args] + [r.name for r in spec.returns if r.name]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SpecError(
            f"{', '.join(map(repr, repeated))} named more than once: give every argument "
            "and named return its own name"
        )
    for a in spec.args:
        row = types.row(a.type)
        if not a.is_tensor and (row is None or not (row.ge_attr or row.symbolic)):
            # A GE graph takes a non-tensor argument as an attr or, symbolic, a host input.
            known = ", ".join(t for t, r in types.TYPES.items() if r.ge_attr or r.symbolic)
            raise SpecError(
                f"argument {a.name!r} has type {a.type!r}, which no GE graph can take: "
                f"use a Tensor or one of {known}"
            )
        if a.aliased and not a.mutated:
            raise SpecError(
                f"argument {a.name!r} is annotated as a view ('(a)') but custom ops may not "
                f"return views of inputs: drop the annotation, e.g. '{_without_alias(spec)}'"
            )
        if a.aliased and a.type != "Tensor":
            raise SpecError(
                f"argument {a.name!r} of type {a.type} is marked mutable: "
                "only plain 'Tensor(a!)' arguments can be mutated by an opsdk op"
            )
    if any(r.aliased for r in spec.returns) and not returns_its_first_argument(spec):
        fixed = _without_alias(spec, drop_mutated_returns=True)
        raise SpecError(
            "only an in-place op may return a mutated input, and then only its first argument "
            "as its one return (torch_npu's 'Tensor(a!) self -> Tensor(a!)', defined with "
            f"tags=torch.Tag.inplace); otherwise return nothing for it, e.g. '{fixed}'"
        )
    if not spec.returns and not spec.inplace:
        raise SpecError(
            "the op returns nothing and mutates nothing: mark the tensor it writes "
            f"'Tensor(a!)' (e.g. '{spec.name}(Tensor(a!) x, ...) -> ()') or return a Tensor"
        )


def _without_alias(spec: OpSchema, drop_mutated_returns: bool = False) -> str:
    """The schema with view annotations removed (and mutated returns dropped): the fix to show."""
    schema = re.sub(r"Tensor\((\w)\)", "Tensor", spec.schema)
    if not drop_mutated_returns:
        return schema
    head, _, ret = schema.rpartition(" -> ")
    kept = [r.strip() for r in ret.strip("()").split(",") if r.strip() and "!" not in r]
    if not kept:
        return f"{head} -> ()"
    return f"{head} -> {kept[0]}" if len(kept) == 1 else f"{head} -> ({', '.join(kept)})"


def returns_its_first_argument(spec: OpSchema) -> bool:
    """torch_npu's in-place convention, ``name_(Tensor(a!) self, ...) -> Tensor(a!)``:
    what torch's ``Tag.inplace`` means, and what auto-functionalization accepts for an
    op carrying that tag."""
    first = spec.args[0] if spec.args else None
    return (
        len(spec.returns) == 1
        and first is not None
        and first.mutated
        and spec.returns[0].alias_set == first.alias_set
    )


def partner(qualname: str) -> str:
    """The in-place partner of a functional op and the other way round, by torch's
    naming rule (``ns::name_`` writes what ``ns::name`` returns)."""
    namespace, _, rest = qualname.partition("::")
    name, dot, overload = rest.partition(".")
    return f"{namespace}::{_partner_name(name)}{dot}{overload}"


def _partner_name(name: str) -> str:
    return name[:-1] if name.endswith("_") else f"{name}_"


def inplace_pair(op: OpSchema) -> tuple[OpSchema, OpSchema]:
    """The torch_npu in-place/functional pair ``op`` is one side of:
    ``ns::name_(Tensor(a!) self, ...) -> Tensor(a!)`` and ``ns::name(Tensor self, ...) ->
    Tensor``, the same arguments otherwise (what TorchAir's and npugraph_ex's reinplace
    passes match, through torch's ``_maybe_get_inplace_op``)."""
    inplace = op.name.endswith("_")
    stem = _partner_name(op.name) if inplace else op.name
    head, _, ret = op.schema.partition(") -> ")
    first = op.args[0] if op.args else None
    rest = [a for a in op.args[1:] if a.aliased]
    shaped = (
        returns_its_first_argument(op)
        if inplace
        else (first is not None and first.type == "Tensor" and ret == "Tensor")
    )
    if not shaped or rest or first is None or first.aliased != inplace:
        raise SpecError(
            "an in-place pair is torch_npu's 'NAME_(Tensor(a!) self, ...) -> Tensor(a!)' and "
            "'NAME(Tensor self, ...) -> Tensor' (only the first argument written): give one of "
            f"them, e.g. '{stem}_(Tensor(a!) self, Tensor index) -> Tensor(a!)'"
        )
    _, _, args = head.partition("(")
    written = re.sub(r"^Tensor\(\w!\)", "Tensor(a!)", args) if inplace else f"Tensor(a!){args[6:]}"
    plain = re.sub(r"^Tensor\(\w!\)", "Tensor", args)
    dot = f".{op.overload}" if op.overload else ""
    return (
        parse(f"{op.namespace}::{stem}_{dot}({written}) -> Tensor(a!)"),
        parse(f"{op.namespace}::{stem}{dot}({plain}) -> Tensor"),
    )


def require_differentiable(spec: OpSchema) -> None:
    """`--autograd` registers a backward with ``torch.library.register_autograd``, which
    torch refuses for ops that mutate inputs and for keyword-only tensor arguments."""
    if spec.inplace:
        written = ", ".join(a.name for a in spec.mutated_args)
        raise SpecError(
            f"--autograd: torch cannot register a backward for an op that writes its inputs "
            f"({written} marked Tensor(a!)): drop --autograd, or make the op out-of-place "
            f"(e.g. '{spec.name}(Tensor x, Tensor y) -> Tensor')"
        )
    kwarg_tensors = [a.name for a in spec.tensor_args if a.kwarg_only]
    if kwarg_tensors:
        raise SpecError(
            f"--autograd: torch cannot register a backward for keyword-only tensor arguments "
            f"({', '.join(kwarg_tensors)}): move them before the '*' in the schema"
        )
    if not spec.tensor_args or not any(r.type.startswith("Tensor") for r in spec.returns):
        raise SpecError(
            "--autograd: a backward needs tensors in and out, and the op "
            f"{'takes' if not spec.tensor_args else 'returns'} none: drop --autograd"
        )


def require_inplace(spec: OpSchema) -> None:
    """`--inplace` promises a mutation: the schema must say which input is written."""
    if not spec.inplace:
        raise SpecError(
            "--inplace needs the mutated input marked 'Tensor(a!)' in the schema, e.g. "
            f"'{spec.name}(Tensor(a!) x, Tensor y) -> ()'"
        )
