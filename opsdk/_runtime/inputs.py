"""Input specs: the inputs an op supports, declared in its package (``specs.py``).

Named after TorchAir's converter test declarations
(``declare_supported([Support(F32(2, 2), F16(2, 2))])``) so they read the same,
but keyed by the op rather than its converter: the harness derives every
column's cases from them (see :mod:`opsdk.harness.variants.cases`). For an op
``my_axpy(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor``::

    declare_supported(
        torch.ops.myops.my_axpy.default,
        [
            Support(F32(2, 3), F32(2, 3)),
            Support(F16(2, 3), F16(2, 3, value_range=(-1, 1))),
            Support(F32(4, 3), F32(3)),  # broadcasting
            Support(F32(), F32()),  # 0-dim
            Support(F32(0, 3), F32(0, 3)),  # empty
            Support(F32(2, 3), F32(2, 3), alpha=-2.5),  # a scalar value
        ],
        tolerances={torch.float16: (1e-2, 1e-2)},  # (rtol, atol) over the defaults
    )

A Support's positional and keyword values are the op's arguments: a
:class:`TensorSpec` (``F32(*dims)`` ...) or a list of them for a tensor, anything
else as a value. Without a declaration an op runs on float32 tensors of shape
(2, 3) and sample scalars derived from its schema.

Sizes are ints, or named :class:`Dim` s when sizes are related other than by
equality (the harness grows sizes between calls in dynamic mode)::

    m, k, n = Dim("m", 2), Dim("k", 3), Dim("n", 4)
    Support(F32(m, k), F32(k, n))  # matmul: the inner dim k is one size
    a, b = Dim("a", 2), Dim("b", 3)
    Support([F32(a, 8), F32(b, 8)], F32(a + b))  # concatenation; 8 stays

A scalar is varied between calls within what is declared: a plain value follows
opsdk's default (see :mod:`opsdk.harness.variants.cases`), ``Fixed(v)`` never changes,
``OneOf(v, w, ...)`` takes those values and ``Range(low, high)`` values in
``[low, high)``: ``Support(F32(2, 3), alpha=OneOf(0.5, 2.0), dim=Range(0, 2))``.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import torch

from opsdk._runtime import spec, types
from opsdk.errors import SpecError

__all__ = [
    "BF16",
    "BOOL",
    "F16",
    "F32",
    "I8",
    "I32",
    "I64",
    "I16",
    "U8",
    "U64",
    "F64",
    "Declaration",
    "Dim",
    "Fixed",
    "OneOf",
    "Range",
    "ScalarSpec",
    "Support",
    "TensorSpec",
    "declare_supported",
    "declared",
]


# Ints named like these pick a dim (sum's dim, ``*_axis``): the columns that call the op
# afresh (eager) move them to the case's other dims; compiled graphs bake them in.
DIM_NAME = re.compile(r"dim|axis|dim\d+|\w+_(?:dim|axis)")
# Ints and lists named like these count or list dims (topk's k, sum's dims): they stay.
DIMS_NAME = re.compile(r"dims|axes|k|\w+_(?:dims|axes)")


def names_dims(name: str) -> bool:
    """Whether an argument's name says it picks, counts or lists dims: a value a kernel
    specializes on (``--from-cann`` fixes it in the specs it writes)."""
    return bool(DIM_NAME.fullmatch(name) or DIMS_NAME.fullmatch(name))


def _grown(size: int, step: int) -> int:
    """A growing size at dynamic ``step`` (0: as declared): each size moves by its own
    amount, so sizes that differ stay different (see :mod:`opsdk.harness.variants.cases`)."""
    return size + step * (size + 1)


class Dim:
    """A named size, ``Dim("m", 2)``: in one Support the same name is the same size and
    grows with it between dynamic calls. ``a + b``, ``2 * h`` and ``m + 1`` size a dim
    that follows others (a concatenation's output, a packed pair)."""

    __slots__ = ("terms", "const", "bases")
    terms: tuple[tuple[str, int], ...]  # each name's coefficient
    const: int
    bases: tuple[tuple[str, int], ...]  # each name's declared size

    def __init__(self, name: str, size: int):
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(
                f"Dim({name!r}, ...): name the dim with an identifier, e.g. Dim('m', 2)"
            )
        if not _is_int(size) or size < 2:
            raise SpecError(
                f"Dim({name!r}, {size!r}): a named dim starts at 2 or more (Dynamo specializes "
                "sizes 0 and 1): write a fixed 0 or 1 as an int"
            )
        self._set({name: 1}, 0, {name: size})

    @classmethod
    def _made(cls, terms: Mapping[str, int], const: int, bases: Mapping[str, int]) -> Dim:
        return cls.__new__(cls)._set(terms, const, bases)

    def _set(self, terms: Mapping[str, int], const: int, bases: Mapping[str, int]) -> Dim:
        object.__setattr__(self, "terms", tuple(sorted(terms.items())))
        object.__setattr__(self, "const", const)
        object.__setattr__(self, "bases", tuple(sorted(bases.items())))
        return self

    def __setattr__(self, name, value):
        raise AttributeError("a Dim is immutable: build a new one with + or *")

    def __add__(self, other) -> Dim:
        if _is_int(other):
            if other < 0:
                raise SpecError(f"{self!r} + {other}: add a dim or a non-negative int")
            return Dim._made(dict(self.terms), self.const + other, dict(self.bases))
        if not isinstance(other, Dim):
            return NotImplemented
        terms = dict(self.terms)
        for name, coeff in other.terms:
            terms[name] = terms.get(name, 0) + coeff
        bases = _merged_bases([self, other])
        return Dim._made(terms, self.const + other.const, bases)

    __radd__ = __add__

    def __mul__(self, factor) -> Dim:
        if not _is_int(factor):
            return NotImplemented
        if factor < 1:
            raise SpecError(f"{factor} * {self!r}: multiply a dim by a positive int")
        terms = {name: coeff * factor for name, coeff in self.terms}
        return Dim._made(terms, self.const * factor, dict(self.bases))

    __rmul__ = __mul__

    def size(self, step: int = 0) -> int:
        """The size at dynamic ``step`` (0: as declared): each name grows, sums follow."""
        bases = dict(self.bases)
        return sum(c * _grown(bases[name], step) for name, c in self.terms) + self.const

    def _key(self) -> tuple:
        return (self.terms, self.const, self.bases)

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        parts = [name if c == 1 else f"{c}*{name}" for name, c in self.terms]
        return " + ".join(parts + ([str(self.const)] if self.const else []))


def _merged_bases(dims: Iterable[Dim]) -> dict[str, int]:
    """Each name's declared size over ``dims``; one name with two sizes is refused."""
    bases: dict[str, int] = {}
    for dim in dims:
        for name, size in dim.bases:
            if bases.setdefault(name, size) != size:
                raise SpecError(
                    f"Dim {name!r} is declared with sizes {bases[name]} and {size}: one name "
                    "is one size; give another name to the other"
                )
    return bases


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument: its sizes (ints or :class:`Dim` s), dtype and (optionally)
    the range its values are drawn from, ``[low, high)`` (default: normal for floats,
    -10..10 for ints). ``static_dims`` lists the dims whose size the op fixes (e.g. a
    head size of 128): dynamic mode keeps them while it grows the others.
    ``fixed_ints`` (set by a Support that names dims) keeps every int size."""

    dims: tuple[int | Dim, ...]
    dtype: torch.dtype
    value_range: tuple[float, float] | None = None
    static_dims: tuple[int, ...] = ()
    fixed_ints: bool = False

    def __post_init__(self):
        if any(not isinstance(d, Dim) and (not _is_int(d) or d < 0) for d in self.dims):
            raise SpecError(
                f"tensor sizes must be non-negative ints or Dim('name', size), got {self.dims}"
            )
        if self.value_range is not None and (
            len(self.value_range) != 2 or self.value_range[0] >= self.value_range[1]
        ):
            raise SpecError(f"value_range must be (low, high) with low < high: {self.value_range}")
        if any(not 0 <= d < len(self.dims) for d in self.static_dims):
            raise SpecError(f"static_dims {self.static_dims} must index the sizes {self.dims}")
        named = [self.dims[d] for d in self.static_dims if isinstance(self.dims[d], Dim)]
        if named:
            raise SpecError(
                f"static_dims {self.static_dims} names {named[0]!r}, a named dim, which grows: "
                "write a fixed size as an int"
            )

    @property
    def named(self) -> tuple[Dim, ...]:
        return tuple(d for d in self.dims if isinstance(d, Dim))

    @property
    def is_empty(self) -> bool:
        return 0 in self.dims

    @property
    def fixed(self) -> tuple[int, ...]:
        """The dims whose int size never grows by request: ``static_dims``, or every
        int once dims are named (sizes 0 and 1 are left to Dynamo's specialization)."""
        return tuple(
            i
            for i, d in enumerate(self.dims)
            if not isinstance(d, Dim) and (i in self.static_dims or self.fixed_ints)
        )

    def sizes(self, step: int) -> tuple[int, ...]:
        """The sizes at dynamic ``step`` (0: as declared); see opsdk.harness.variants.cases."""
        fixed = self.fixed
        return tuple(
            d.size(step)
            if isinstance(d, Dim)
            else _grown(d, step)
            if d >= 2 and i not in fixed
            else d
            for i, d in enumerate(self.dims)
        )

    @property
    def varies(self) -> bool:
        """Has a size that changes between calls (Dynamo specializes sizes 0 and 1)."""
        return self.sizes(1) != self.sizes(0)

    def __repr__(self) -> str:
        name = SPEC_NAMES.get(self.dtype, str(self.dtype))
        parts = [*map(repr, self.dims)]  # F32() is 0-dim: no leading comma then
        parts += [f"value_range={self.value_range}"] if self.value_range else []
        parts += [f"static_dims={self.static_dims}"] if self.static_dims else []
        return f"{name}({', '.join(parts)})"


def _typed(dtype: torch.dtype, name: str):
    def make(
        *dims: int | Dim,
        value_range: tuple[float, float] | None = None,
        static_dims: tuple[int, ...] = (),
    ) -> TensorSpec:
        return TensorSpec(tuple(dims), dtype, value_range, tuple(static_dims))

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"A {dtype} tensor of sizes ``dims`` (``{name}()`` is 0-dim)."
    return make


# The spec constructor of each dtype, by the name it is imported as (generated specs.py).
SPEC_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int8: "I8",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.bool: "BOOL",
    # the other dtypes CANN's op definitions declare that torch computes with on CPU
    torch.int16: "I16",
    torch.uint8: "U8",
    torch.uint64: "U64",
    torch.float64: "F64",
}
F32 = _typed(torch.float32, "F32")
F16 = _typed(torch.float16, "F16")
BF16 = _typed(torch.bfloat16, "BF16")
I8 = _typed(torch.int8, "I8")
I32 = _typed(torch.int32, "I32")
I64 = _typed(torch.int64, "I64")
BOOL = _typed(torch.bool, "BOOL")
I16 = _typed(torch.int16, "I16")
U8 = _typed(torch.uint8, "U8")
U64 = _typed(torch.uint64, "U64")
F64 = _typed(torch.float64, "F64")


class ScalarSpec:
    """The values a non-tensor argument may take: the first call of a case takes
    ``at(0)``, later calls that vary scalars take ``at(1)``, ``at(2)``, ..."""

    def at(self, index: int):
        raise NotImplementedError


class OneOf(ScalarSpec):
    """Any of ``values`` (a set the op supports), the first one first."""

    def __init__(self, *values):
        if not values:
            raise SpecError("OneOf() needs the values the argument may take, e.g. OneOf(0.5, 2.0)")
        if any(isinstance(v, (ScalarSpec, TensorSpec, Dim)) for v in values):
            raise SpecError(f"OneOf{values!r}: give plain values")
        self.values = values

    def at(self, index: int):
        return self.values[index % len(self.values)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.values))})"


class Fixed(OneOf):
    """Exactly ``value``: never varied (an option the op takes one way in this case)."""

    def __init__(self, value):
        super().__init__(value)


# Where in [low, high) a Range's values fall, in call order: both ends' side, then inside.
_RANGE_POINTS = (0.0, 0.5, 0.75, 0.25)


@dataclass(frozen=True)
class Range(ScalarSpec):
    """Values in ``[low, high)``: ints when both bounds are ints, floats otherwise;
    the first call takes ``low``."""

    low: int | float
    high: int | float

    def __post_init__(self):
        bounds = (self.low, self.high)
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bounds)
        if not numbers or not math.isfinite(self.high - self.low) or self.low >= self.high:
            raise SpecError(f"{self!r}: give finite numbers low < high, e.g. Range(0.0, 1.0)")

    @property
    def ints(self) -> bool:
        return _is_int(self.low) and _is_int(self.high)

    def at(self, index: int):
        span = (self.high - self.low) * _RANGE_POINTS[index % len(_RANGE_POINTS)]
        return self.low + (int(span) if self.ints else span)

    def __repr__(self) -> str:
        return f"Range({self.low!r}, {self.high!r})"


class Support:
    """One supported call: the op's arguments, tensors given as :class:`TensorSpec`,
    scalars as values or :class:`ScalarSpec` s. Once a Support names dims (:class:`Dim`),
    its int sizes stay fixed: what grows is what is named."""

    def __init__(self, *args, **kwargs):
        named = [d for t in _tensor_specs([*args, *kwargs.values()]) for d in t.named]
        self.dims = _merged_bases(named)
        if named:
            _refuse_duck_sized(named)
            fix = lambda v: dataclasses.replace(v, fixed_ints=True)  # noqa: E731
            args = _mapped(args, fix)
            kwargs = dict(zip(kwargs, _mapped(kwargs.values(), fix), strict=True))
        self.args = tuple(args)
        self.kwargs = kwargs

    def tensor_specs(self) -> list[TensorSpec]:
        return _tensor_specs([*self.args, *self.kwargs.values()])

    @property
    def has_empty(self) -> bool:
        return any(t.is_empty for t in self.tensor_specs())

    @property
    def varies(self) -> bool:
        return any(t.varies for t in self.tensor_specs())

    @property
    def label(self) -> str:
        """How failure messages name the case: its arguments, then the named dims' sizes."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        sizes = ", ".join(f"{name}={size}" for name, size in self.dims.items())
        return ", ".join(parts) + (f" with {sizes}" if sizes else "")

    def __repr__(self) -> str:
        return f"Support({self.label})"


def _tensor_specs(values) -> list[TensorSpec]:
    """The TensorSpecs among argument ``values`` (lists of them included), in order."""
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
    return [v for v in flat if isinstance(v, TensorSpec)]


def _mapped(values, fn) -> list:
    """``values`` with ``fn`` applied to each TensorSpec (lists of them included)."""
    one = lambda v: fn(v) if isinstance(v, TensorSpec) else v  # noqa: E731
    return [[one(x) for x in v] if isinstance(v, list) else one(v) for v in values]


def _refuse_duck_sized(dims: list[Dim]) -> None:
    """Two different named sizes equal on the first call would be one size to Dynamo
    (duck sizing) until they part, a recompile the op is not to blame for."""
    by_size: dict[int, Dim] = {}
    for dim in dims:
        other = by_size.setdefault(dim.size(), dim)
        if other != dim:
            raise SpecError(
                f"{other!r} and {dim!r} are both {dim.size()} on the first call: Dynamo takes "
                "equal sizes for one (duck sizing) and recompiles when they part; give them "
                "different sizes"
            )


@dataclass(frozen=True)
class Declaration:
    """What an op package declared for one op."""

    cases: tuple[Support, ...]
    tolerances: Mapping[torch.dtype, tuple[float, float]] = field(default_factory=dict)
    non_contiguous: bool = True  # also run the first case on non-contiguous tensors


_REGISTRY: dict[str, Declaration] = {}
# Where each op's declaration was made (file:line of the declare_supported call).
_DECLARED_AT: dict[str, str] = {}


def declare_supported(
    op,
    cases: Iterable[Support],
    *,
    tolerances: Mapping[torch.dtype, tuple[float, float]] | None = None,
    non_contiguous: bool = True,
) -> Declaration:
    """Register the inputs ``op`` (a ``torch.ops`` overload) supports; checked against
    its schema now, so a mistake fails the package's import with the argument named.
    One declaration per op: a second call elsewhere is refused rather than merged or
    let to replace the first, since which cases and tolerances win would be a guess
    (the same call run again, its module imported anew, replaces it)."""
    caller = sys._getframe(1)
    at = f"{caller.f_code.co_filename}:{caller.f_lineno}"
    name, declaration = _checked(op, cases, tolerances, non_contiguous)
    first = _DECLARED_AT.setdefault(name, at)
    if first != at:
        raise SpecError(
            f"declare_supported({name}) at {at}: its inputs are declared already, at {first}: "
            "give all its cases in that one declare_supported([...])"
        )
    _REGISTRY[name] = declaration
    return declaration


def redeclare(op, cases: Iterable[Support], *, non_contiguous: bool = True) -> Declaration:
    """Replace what ``op`` supports, checked as :func:`declare_supported` checks it: the
    audit's own cases, tried and narrowed over those a library declared."""
    name, declaration = _checked(op, cases, None, non_contiguous)
    _REGISTRY[name] = declaration
    return declaration


def _checked(op, cases, tolerances, non_contiguous: bool) -> tuple[str, Declaration]:
    """The op's qualname and its declaration, refused (:class:`SpecError`) where it does
    not fit the op's schema."""
    if not isinstance(op, torch._ops.OpOverload):
        raise SpecError(
            f"declare_supported takes an op overload (torch.ops.ns.op.default), got {op!r}"
        )
    cases = tuple(cases)
    op_spec = spec.of(op)
    name = op_spec.qualname
    if not cases or not all(isinstance(c, Support) for c in cases):
        raise SpecError(f"declare_supported({name}): give a non-empty list of Support(...)")
    for case in cases:
        _check_against_schema(name, op_spec, case)
    for dtype, tol in (tolerances or {}).items():
        if not isinstance(dtype, torch.dtype) or len(tol) != 2:
            raise SpecError(
                f"declare_supported({name}): tolerances map a torch.dtype to (rtol, atol), "
                f"got {dtype!r}: {tol!r}"
            )
    return name, Declaration(cases, dict(tolerances or {}), non_contiguous)


def _check_against_schema(name: str, op: spec.OpSchema, case: Support) -> None:
    positional = [a for a in op.args if not a.kwarg_only]
    by_name = {a.name: a for a in op.args}
    if len(case.args) > len(positional):
        raise SpecError(
            f"{case!r} of {name}: {len(case.args)} positional values, the schema has "
            f"{len(positional)}"
        )
    given = dict(zip([a.name for a in positional], case.args, strict=False))
    for key, value in case.kwargs.items():
        if key not in by_name:
            raise SpecError(f"{case!r} of {name}: the schema has no argument {key!r}")
        given[key] = value
    for arg in op.args:
        if arg.name not in given:
            # ``Tensor?[]`` too: a missing list of optional tensors is taken as None.
            if not arg.has_default and "?" not in arg.type:
                raise SpecError(f"{case!r} of {name}: give a value for {arg.name!r}")
            continue
        value = given[arg.name]
        values = value if isinstance(value, list) else [value]
        if arg.is_tensor and not all(isinstance(v, TensorSpec) or v is None for v in values):
            raise SpecError(
                f"{case!r} of {name}: {arg.name!r} is a tensor: give F32(...), F16(...), ..."
            )
        if not arg.is_tensor and any(isinstance(v, (TensorSpec, Dim)) for v in values):
            raise SpecError(f"{case!r} of {name}: {arg.name!r} is not a tensor: give a value")
        if isinstance(value, list) and any(isinstance(v, ScalarSpec) for v in value):
            raise SpecError(
                f"{case!r} of {name}: declare the values of the whole list {arg.name!r}, "
                "e.g. OneOf([0, 1], [1, 0])"
            )
        if isinstance(value, Range):
            _check_range(f"{case!r} of {name}", arg, value)


def _check_range(where: str, arg: spec.Arg, declared: Range) -> None:
    """A Range draws ints or floats, as the argument takes them."""
    kind = types.base(arg.type)
    if kind not in ("int", "SymInt", "float", "Scalar"):
        raise SpecError(f"{where}: {arg.name!r} is a {arg.type}: a Range needs a number argument")
    if kind == "float" and declared.ints:
        raise SpecError(
            f"{where}: {arg.name!r} is a float but {declared!r} draws ints: write "
            f"Range({float(declared.low)}, {float(declared.high)})"
        )
    if kind in ("int", "SymInt") and not declared.ints:
        raise SpecError(f"{where}: {arg.name!r} is an int: give {declared!r} int bounds")


def declared(qualname: str) -> Declaration | None:
    """The declaration registered for ``qualname`` (``ns::name[.overload]``), if any."""
    return _REGISTRY.get(qualname)


# The case an op without a declaration runs: float32 tensors of these sizes, and a sample
# value per scalar type.
DEFAULT_DIMS = (2, 3)

_SCALAR_SAMPLES = {
    "int": 2,
    "SymInt": 2,
    "float": 0.5,
    "Scalar": 0.5,
    "bool": True,
    "str": "",
    "ScalarType": torch.float32,
}


def default_support(op: spec.OpSchema) -> Support:
    """The one case an op without a declaration runs (also an attached package's first
    declared case)."""
    args, kwargs = [], {}
    for arg in op.args:
        value = _default_value(arg)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return Support(*args, **kwargs)


def _default_value(arg: spec.Arg):
    if arg.is_tensor:
        return [F32(*DEFAULT_DIMS)] * 2 if arg.is_list else F32(*DEFAULT_DIMS)
    if arg.has_default:
        return arg.default
    if arg.is_optional:
        return None
    sample = _SCALAR_SAMPLES.get(arg.type.split("[")[0])
    return [sample] * (arg.size or 1) if arg.is_list else sample
