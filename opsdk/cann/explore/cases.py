"""Cases of an op's input space, from its CANN definition alone (no fake, no C++ needed:
a kernel check can pick its cases here too).

A case is what GE hands InferShape for one node: per IR input its instances (GE dtype,
shape, a value-depend input's data; none for an absent optional one) and the attrs in IR
order; ``pinned`` names the optional inputs and attrs a caller cannot vary (the torch
op has no argument for them): those stay left out, at their default. :func:`generate`
yields, deterministically for a seed, first the definition's structure (every dtype
row, mixed rows included, at every rank the formats allow, with sizes alike as
:mod:`opsdk.cann.sizes` guesses them; every optional input absent and present; every
attr at its default and off it), then single changes around ``anchors`` (cases a side
accepted: an odd, even, 1 or large size at each dim, a tensor's rank, another row's
dtype, an optional input dropped or given, an attr moved), then seeded random
combinations of all of these.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from opsdk.cann import sizes
from opsdk.cann._model import CannOp, counts

__all__ = [
    "MIXED_ROWS",
    "RANKS",
    "SIZES",
    "Case",
    "Tensor",
    "changes",
    "defaults",
    "generate",
    "rows",
    "smaller",
]

RANKS = (1, 2, 3, 4, 5)  # what an ND format allows here (0-D and 6-D+ are rare in ops)
SIZES = (1, 3, 4, 2, 64)  # per dim: one, odd, even (and the smallest even), large
_BASE = 4
RANDOM_TRIES = 20_000
MIXED_ROWS = 32  # a REG_OP's combinations of its sets tried all, up to this many
_VALUE_DTYPES = ("DT_INT64", "DT_INT32")


@dataclass(frozen=True)
class Tensor:
    """One input instance: GE dtype, shape, and a value-depend input's values."""

    dtype: str
    shape: tuple[int, ...]
    data: tuple | None = None


@dataclass(frozen=True)
class Case:
    """A node's inputs (per IR input its instances: () is an absent optional one) and
    attrs (IR order)."""

    inputs: tuple[tuple[Tensor, ...], ...]
    attrs: tuple

    def alike(self) -> bool:
        """Whether every given tensor (but value-depend ones) has one shape: a case an
        op of several tensors surely takes, not one whose tensors merely fit its C++."""
        shapes = {t.shape for instances in self.inputs for t in instances if t.data is None}
        return len(shapes) <= 1

    def shapes(self) -> tuple:
        """Per input its instances' shapes: what a case valid for the op vouches for in
        another case (any row, any attrs the op takes)."""
        return tuple(tuple(t.shape for t in instances) for instances in self.inputs)

    def size(self) -> tuple:
        """How big the case is, for shrinking: fewer instances, lower ranks, smaller
        sizes, then attrs nearer their defaults come first."""
        tensors = [t for instances in self.inputs for t in instances]
        return (
            len(tensors),
            sum(len(t.shape) for t in tensors),
            sum(sum(t.shape) for t in tensors),
        )


def rows(cann: CannOp) -> list[dict[str, str]]:
    """The definition's dtype rows over its inputs (IR name -> GE dtype): column i of every
    list, a one-entry list serving every row. A REG_OP's lists are sets, each checked
    alone (tensors of one ``DATATYPE`` symbol together): its sets aligned by index first
    (each cycled), then the mixed rows, every combination while there are at most
    :data:`MIXED_ROWS`, else each aligned row with one tensor (or symbol) moved to another
    dtype of its set. An undeclared input is DT_FLOAT."""
    found = _aligned(cann)
    if cann.rows:
        return found
    names = [i.name for i in cann.ir.inputs]
    declared = {n: cann.dtypes.get(n) or () for n in names}
    width = max((len(v) for v in declared.values()), default=0) or 1
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(cann.type_vars.get(name, f"/{name}"), []).append(name)
    sets = {key: tuple(dict.fromkeys(declared[members[0]])) for key, members in groups.items()}
    sets = {key: choices for key, choices in sets.items() if len(choices) > 1}
    combinations = 1
    for choices in sets.values():
        combinations *= len(choices)
    if combinations <= MIXED_ROWS:
        mixed = (
            dict(zip(sets, picked, strict=True)) for picked in itertools.product(*sets.values())
        )
    else:
        mixed = ({key: d} for key, choices in sets.items() for d in choices)
    for picked in mixed:
        for aligned in found[:width] if combinations > MIXED_ROWS else found[:1]:
            row = {**aligned, **{n: d for key, d in picked.items() for n in groups[key]}}
            if row not in found:
                found.append(row)
    return found


def _aligned(cann: CannOp) -> list[dict[str, str]]:
    """Column i of every list (each cycled): an OpDef's rows, a REG_OP's sets by index."""
    declared = {i.name: cann.dtypes.get(i.name) or () for i in cann.ir.inputs}
    width = max((len(v) for v in declared.values()), default=0) or 1
    found = []
    for i in range(width):
        row = {n: (v[i % len(v)] if v else "DT_FLOAT") for n, v in declared.items()}
        if row not in found:
            found.append(row)
    return found


def _ranks(cann: CannOp, name: str, row: int) -> tuple[int, ...]:
    """The ranks tensor ``name``'s format allows in row ``row``: a fixed one (NCHW: 4), else
    :data:`RANKS`."""
    formats = cann.formats.get(name, ())
    fixed = (
        sizes.FORMAT_RANKS.get(formats[row % len(formats)].removeprefix("FORMAT_"))
        if (formats)
        else None
    )
    return (fixed,) if fixed else RANKS


class _Space:
    """What the definition lets vary, and cases built from choices of it."""

    def __init__(self, cann: CannOp, pinned: frozenset = frozenset()):
        self.cann, self.ir, self.pinned = cann, cann.ir, pinned
        self.rows = rows(cann)
        self.aligned = len(_aligned(cann))  # the rows first; a REG_OP's mixed ones after
        self.counted = counts(self.ir)
        self.depend = {i.name for i in self.ir.inputs if i.value_depend}

    def case(self, row: int, shapes: dict, absent: frozenset = frozenset(), attrs=None) -> Case:
        dtypes = self.rows[row]
        made: list[tuple[Tensor, ...]] = []
        for spec in self.ir.inputs:
            shape = shapes.get(spec.name, ())
            left = spec.name in absent or spec.name in self.pinned
            if left or (spec.kind == "optional" and spec.name not in shapes):
                made.append(())
            elif spec.name in self.depend:
                made.append((self.value(spec.name, dtypes[spec.name], shape),))
            else:
                count = 2 if spec.kind == "dynamic" else 1
                made.append((Tensor(dtypes[spec.name], tuple(shape)),) * count)
        attrs = self.attrs() if attrs is None else attrs
        dynamic = sum(
            len(m) for m, i in zip(made, self.ir.inputs, strict=True) if i.kind == "dynamic"
        )
        attrs = tuple(
            dynamic if a.name in self.counted else v
            for a, v in zip(self.ir.attrs, attrs, strict=True)
        )
        return Case(tuple(made), attrs)

    def value(self, name: str, dtype: str, shape: tuple) -> Tensor:
        """A value-depend input: a list of 2s one per dim of the others (``shape``'s rank),
        its dtype an integer one."""
        dtype = dtype if dtype in _VALUE_DTYPES else _VALUE_DTYPES[0]
        length = max(len(shape), 1)
        return Tensor(dtype, (length,), (2,) * length)

    def attrs(self) -> tuple:
        """Every attr at its default, a required one at a sample value."""
        return tuple(a.default if a.default is not None else _sample(a.type) for a in self.ir.attrs)

    def moved_attrs(self, attrs: tuple) -> Iterator[tuple]:
        """``attrs`` with one attr off its value: a bool flipped, an int at 0, 1, -1, 2, a
        float moved by 0.5, a list one shorter."""
        for i, (attr, value) in enumerate(zip(self.ir.attrs, attrs, strict=True)):
            if self.fixed(attr):
                continue
            for other in _others(value):
                yield attrs[:i] + (other,) + attrs[i + 1 :]

    def tensors(self) -> list[str]:
        """The IR inputs that take sizes (value-depend ones take data)."""
        return [i.name for i in self.ir.inputs]

    def optional(self) -> list[str]:
        return [
            i.name for i in self.ir.inputs if i.kind == "optional" and i.name not in self.pinned
        ]

    def fixed(self, attr) -> bool:
        """An attr that keeps its value: pinned, a dtype's number, a dynamic input's count."""
        return attr.name in self.pinned or attr.dtype or attr.name in self.counted


def defaults(cann: CannOp) -> tuple:
    """The attrs as a case has them unmoved: each at its default (a sample if required)."""
    return _Space(cann).attrs()


def _sample(attr_type: str):
    """A value for an attr the definition leaves required."""
    if attr_type.startswith("VT_LIST"):
        return (1,)
    return {"VT_BOOL": False, "VT_FLOAT": 1.0, "VT_STRING": ""}.get(attr_type, 1)


def _others(value) -> list:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [v for v in (0, 1, -1, 2) if v != value]
    if isinstance(value, float):
        return [value + 0.5]
    if isinstance(value, tuple) and value:
        return [value[:-1]]
    return []


def generate(
    cann: CannOp, seed: int = 0, anchors: Iterable[Case] = (), pinned: frozenset = frozenset()
) -> Iterator[Case]:
    """The cases of ``cann``'s input space, each once: its structure first, then single
    changes around each of ``anchors`` (a list the caller may grow while this runs: a case
    accepted becomes an anchor), then random combinations (the caller's budget stops
    them)."""
    space = _Space(cann, pinned)
    seen: set[Case] = set()

    def new(cases: Iterable[Case]) -> Iterator[Case]:
        for case in cases:
            if case not in seen:
                seen.add(case)
                yield case

    yield from new(_structure(space))
    for anchor in anchors:
        yield from new(changes(cann, anchor, pinned))
    yield from new(_random(space, random.Random(seed)))


def _structure(space: _Space) -> Iterator[Case]:
    """Every row at the hinted rank's alike sizes (with optional inputs given and left
    out), every rank at the first row (the same), each optional input left out, every attr off its
    default, :mod:`opsdk.cann.sizes`' other candidates, then a REG_OP's mixed rows."""
    names, optional = space.tensors(), frozenset(space.optional())
    candidates = list(sizes.candidates(space.cann, names))
    first = candidates[0][0]
    for row in range(space.aligned):
        yield space.case(row, first)
        if optional:
            yield space.case(row, first, optional)
    for r in RANKS:
        at_rank = {n: (_BASE,) * _rank(space, n, r) for n in names}
        yield space.case(0, at_rank)
        if optional:
            yield space.case(0, at_rank, optional)
    for name in optional:
        yield space.case(0, first, frozenset({name}))
    for attrs in space.moved_attrs(space.attrs()):
        yield space.case(0, first, attrs=attrs)
    for shapes, _ in candidates[1:]:
        yield space.case(0, shapes)
    for row in range(space.aligned, len(space.rows)):
        yield space.case(row, first)


def _rank(space: _Space, name: str, wanted: int) -> int:
    allowed = _ranks(space.cann, name, 0)
    return wanted if wanted in allowed else allowed[0]


def changes(cann: CannOp, case: Case, pinned: frozenset = frozenset()) -> Iterator[Case]:
    """``case`` changed in one thing: a dim's size (at that dim from the right in every
    tensor having it, so alike tensors stay alike), one tensor's size, a tensor's rank, the
    dtypes of another row, an optional input dropped or given, an attr moved."""
    space = _Space(cann, pinned)
    shapes = _shapes(space, case)
    absent = frozenset(n for n, i in zip(space.tensors(), case.inputs, strict=True) if not i)
    row = _row_of(space, case)
    longest = max((len(s) for s in shapes.values()), default=0)
    for back, size in itertools.product(range(1, longest + 1), SIZES):
        yield space.case(
            row, {n: _at(s, -back, size) for n, s in shapes.items()}, absent, case.attrs
        )
    for name, shape in shapes.items():
        for back, size in itertools.product(range(1, len(shape) + 1), SIZES):
            yield space.case(row, {**shapes, name: _at(shape, -back, size)}, absent, case.attrs)
        for rank in _ranks(cann, name, row):
            if rank != len(shape):
                resized = ((_BASE,) * rank + shape)[len(shape) :]
                yield space.case(row, {**shapes, name: resized}, absent, case.attrs)
    for other in range(len(space.rows)):
        if other != row:
            yield space.case(other, shapes, absent, case.attrs)
    for name in space.optional():
        yield space.case(row, shapes, absent ^ {name}, case.attrs)
    for attrs in space.moved_attrs(case.attrs):
        yield space.case(row, shapes, absent, attrs)


def _random(space: _Space, rng: random.Random) -> Iterator[Case]:
    """Random rows, ranks, sizes, optional inputs and attrs (:data:`RANDOM_TRIES` of them:
    a small space repeats, and each case is yielded once)."""
    names, optional = space.tensors(), space.optional()
    attr_choices = [
        [v] if space.fixed(a) else [v, *_others(v)]
        for a, v in zip(space.ir.attrs, space.attrs(), strict=True)
    ]
    for _ in range(RANDOM_TRIES):
        rank = rng.choice(RANKS)
        dims = tuple(rng.choice(SIZES) for _ in range(rank))
        shapes = {}
        for name in names:
            r = _rank(space, name, rank if rng.random() < 0.8 else rng.choice(RANKS))
            shapes[name] = (
                (dims * r)[-r:]
                if rng.random() < 0.8
                else tuple(rng.choice(SIZES) for _ in range(r))
            )
        absent = frozenset(n for n in optional if rng.random() < 0.5)
        attrs = tuple(rng.choice(c) for c in attr_choices)
        yield space.case(rng.randrange(len(space.rows)), shapes, absent, attrs)


def _shapes(space: _Space, case: Case) -> dict[str, tuple[int, ...]]:
    """Each given input's shape (a value-depend input's: one size per value)."""
    return {
        name: i[0].shape if i[0].data is None else (_BASE,) * len(i[0].data)
        for name, i in zip(space.tensors(), case.inputs, strict=True)
        if i
    }


def _row_of(space: _Space, case: Case) -> int:
    dtypes = {n: i[0].dtype for n, i in zip(space.tensors(), case.inputs, strict=True) if i}
    for index, row in enumerate(space.rows):
        if all(row[n] == d or n in space.depend for n, d in dtypes.items()):
            return index
    return 0


def _at(shape: tuple[int, ...], index: int, size: int) -> tuple[int, ...]:
    if -index > len(shape):
        return shape
    changed = list(shape)
    changed[index] = size
    return tuple(changed)


def smaller(cann: CannOp, case: Case, pinned: frozenset = frozenset()) -> Iterator[Case]:
    """``case`` made smaller in one thing, for shrinking a finding: an optional input
    left out, every tensor one rank lower or one tensor so, a dim's size down (in every
    tensor having it, then in one), an attr back to its default, the first row's dtypes."""
    space = _Space(cann, pinned)
    shapes = _shapes(space, case)
    absent = frozenset(n for n, i in zip(space.tensors(), case.inputs, strict=True) if not i)
    row = _row_of(space, case)
    for name in space.optional():
        if name not in absent:
            yield space.case(row, shapes, absent | {name}, case.attrs)
    lower = {n: s[1:] for n, s in shapes.items() if len(s) > 1 and len(_ranks(cann, n, row)) > 1}
    if lower:
        yield space.case(row, {**shapes, **lower}, absent, case.attrs)
    for name, shape in lower.items():
        yield space.case(row, {**shapes, name: shape}, absent, case.attrs)
    longest = max((len(s) for s in shapes.values()), default=0)
    for back in range(1, longest + 1):
        for size in SIZES[:4]:
            down = {n: _at(s, -back, size) for n, s in shapes.items() if _below(s, -back, size)}
            if down:
                yield space.case(row, {**shapes, **down}, absent, case.attrs)
    for name, shape in shapes.items():
        for index, size in itertools.product(range(len(shape)), SIZES[:4]):
            if _below(shape, index, size):
                yield space.case(row, {**shapes, name: _at(shape, index, size)}, absent, case.attrs)
    defaults = space.attrs()
    for i, (value, default) in enumerate(zip(case.attrs, defaults, strict=True)):
        if value != default:
            yield space.case(row, shapes, absent, case.attrs[:i] + (default,) + case.attrs[i + 1 :])
    if row:
        yield space.case(0, shapes, absent, case.attrs)


def _below(shape: tuple[int, ...], index: int, size: int) -> bool:
    return -len(shape) <= index < len(shape) and size < shape[index]
