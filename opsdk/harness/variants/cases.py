"""The cases each column runs, derived from an op's input specs (:mod:`opsdk._runtime.inputs`).

A :class:`Case` is a group of calls that share dtypes, ranks and memory layout,
so one compiled function serves all of them: a compiled column compiles once per
case, and any further compile within a case is a recompile, a failure. Calls
within a case get fresh values; by shape mode:

- ``static`` and ``mark_static`` repeat the declared sizes;
- ``dynamic`` grows every size of 2 or more on each call, each by its own
  amount (``d -> d + step * (d + 1)``): sizes that were equal stay equal
  (Dynamo's duck sizing), different ones stay different and change by
  different amounts (a fake function that confuses two sizes shows). Sizes 0
  and 1 stay: Dynamo specializes them (1 is also what broadcasting needs); so
  do the ``static_dims`` a spec declares (sizes the op fixes). A case that
  names dims (``Dim``) grows each name that way, sums follow their terms, and
  its int sizes stay. Sizes that stay are marked static for Dynamo
  (:func:`mark_static`), so duck sizing never ties one to a growing size.

Host arguments. A column that varies them (``vary_from``) keeps the first value
on the calls before that index and takes the next values after it, within what
the spec declares (``Fixed``, ``OneOf``, ``Range``; a list's ``OneOf`` gives whole
lists). A plain value varies by opsdk's default: ints and floats step by 1
(``0.5 -> 1.5 -> 2.5``), an int list steps every element by 1 (``[2, 3] ->
[3, 4]``); an int named like a dimension (``dim``, ``axis``, ``*_dim``) takes the
case's other dims (``-1 -> 0``, within the rank of its largest tensor); a count
named ``k``, a list of dims, a bool, a str, a dtype and a float list stay.
Compiled columns vary only what the compiled graph takes as an input: a symbolic
int or int list (``SymInt``, ``SymInt[]``, an int ``Scalar``) in ``dynamic`` and
``mark_static`` mode; Dynamo bakes any other value in and recompiles when it
changes, as it should. A float too: torch 2.13's Dynamo (``specialize_float`` off) makes
a SymFloat of it, but specializes it where it reaches a custom op's ``float`` or
``Scalar`` argument, so no SymFloat reaches an op's graph. A value opsdk picked that
the op's CPU reference refuses is not taken (the declared values are). A failure on a
call with changed values says so (``alpha 0.5 -> 1.5 on call 1``); a passing compiled
cell lists the values each call took (``Result.notes``).

The declared cases, in order, then derived ones:

- a ``non-contiguous`` copy of the first case (same sizes, dims laid out in
  reverse order in memory: dense, so ``clone`` and device copies keep the
  strides) unless the op declared ``non_contiguous=False``;
- edge cases: ``eager`` and ``opcheck`` run every case (each call stands
  alone there). The compiled columns skip, in dynamic mode, a case where no
  size grows (all 0-dim, empty, size-1 or static_dims): Dynamo specializes
  sizes 0 and 1, so its graph would be static, labelled dynamic (and the GE
  column rightly fails a dynamic graph without a symbolic dim). ``ge`` (a
  column registered with ``empty_cases=False``) also
  skips cases with an empty tensor: TorchAir folds an op with an empty output
  into a Const, so the GE graph has no op node to check.

An op without a declaration runs one case: float32 tensors of sizes (2, 3),
sample scalars derived from the schema.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch

from opsdk._runtime.inputs import (
    DIM_NAME,
    DIMS_NAME,
    Fixed,
    OneOf,
    ScalarSpec,
    Support,
    TensorSpec,
    declared,
    default_support,
)
from opsdk._runtime.spec import Arg, OpSchema
from opsdk.harness import columns
from opsdk.harness.cell import CellFailure

# Size step of each call of a case, per shape mode (see TensorSpec.sizes).
STEPS = {
    "static": (0, 0, 0),
    "mark_static": (0, 0, 0),
    "dynamic": (0, 1, 2),
}


@dataclass
class Call:
    """One call's arguments (CPU tensors; the runner moves them to the device).
    ``fixed`` holds, per tensor in :func:`tensors_of` order, the dims whose size
    stays (see :func:`mark_static`); ``changed`` the host arguments this call changed
    (``varied``: their names), ``by_default`` whether opsdk picked any of the new
    values, ``declared`` the names of those the specs declare (``OneOf``, ``Range``)."""

    args: list
    kwargs: dict
    fixed: tuple[tuple[int, ...], ...] = ()
    changed: str = ""
    by_default: bool = False
    declared: tuple[str, ...] = ()
    varied: tuple[str, ...] = ()

    @property
    def moves_dim(self) -> bool:
        """Whether this call changed a dimension argument (``dim``, ``axis``...): what the
        op computes along, not only a value."""
        return any(DIM_NAME.fullmatch(name) for name in self.varied)

    @contextlib.contextmanager
    def noted(self):
        """Failures within say which scalars the harness changed for this call."""
        try:
            yield
        except CellFailure as failure:
            if not self.changed:
                raise
            raise CellFailure(
                failure.layer,
                f"{failure} (the harness changed {self.changed}; specs.py declares the "
                "values a scalar may take: Fixed(...), OneOf(...), Range(...))",
            ) from failure


@dataclass
class Case:
    """Calls one compiled function runs; ``label`` names the case in failure messages
    (empty for an op without declared specs), ``tolerances`` override the defaults."""

    label: str
    calls: list[Call]
    tolerances: Mapping[torch.dtype, tuple[float, float]] = field(default_factory=dict)

    @contextlib.contextmanager
    def named(self):
        """Failures within name the case (an op without declared specs has one
        unnamed case, and its messages stay as they were)."""
        try:
            yield
        except CellFailure as failure:
            if not self.label:
                raise
            raise CellFailure(failure.layer, f"case {self.label}: {failure}") from failure


def cases(
    spec: OpSchema,
    shapes: str,
    backend: str,
    *,
    steps: Sequence[int] | None = None,
    vary_from: int | None = None,
) -> list[Case]:
    """The op's cases for the ``backend`` column in ``shapes`` mode (edge cases a
    column cannot test are left out). ``steps`` overrides the per-call size steps;
    calls from index ``vary_from`` on take other values of the scalars the column
    may vary (see the module docstring)."""
    declaration = declared(spec.qualname)
    tolerances: Mapping[torch.dtype, tuple[float, float]]
    if declaration is None:
        supports, tolerances = [("", default_support(spec), False)], {}
    else:
        supports = [(s.label, s, False) for s in declaration.cases]
        if declaration.non_contiguous:
            supports.append((f"non-contiguous {supports[0][0]}", declaration.cases[0], True))
        tolerances = declaration.tolerances
    steps = tuple(STEPS[shapes] if steps is None else steps)
    column = columns.column(backend)
    result = []
    for index, (label, support, permuted) in enumerate(supports):
        if not _runs_in(support, shapes, backend):
            continue
        case_call = functools.partial(
            _call,
            spec,
            support,
            permuted=permuted,
            may_vary=functools.partial(_may_vary, column, shapes),
        )

        def call(i, step, variant, case_call=case_call, index=index, defaults=True):
            seed = 1234 + 100 * index + i
            return case_call(step, seed=seed, index=i, variant=variant, defaults=defaults)

        calls = []
        for i, step in enumerate(steps):
            variant = 0 if vary_from is None or i < vary_from else i - vary_from + 1
            made = call(i, step, variant)
            if made.by_default and not _accepts(spec, made):
                # A value opsdk picked that the op's own reference refuses (groups must
                # divide channels) proves nothing about a graph: keep the declared ones.
                declared_only = call(i, step, variant, defaults=False)
                made = declared_only if _accepts(spec, declared_only) else made
            calls.append(made)
        result.append(Case(label, calls, tolerances))
    return result


def _accepts(spec: OpSchema, call: Call) -> bool:
    """Whether the op's CPU kernel takes ``call``: a changed scalar it refuses proves
    nothing about a graph, so the declared value stays."""
    cloned = Call(map_tensors(call.args, torch.clone), map_tensors(call.kwargs, torch.clone))
    try:
        with torch.no_grad():
            spec.op()(*cloned.args, **cloned.kwargs)
    except Exception:  # noqa: BLE001 - any refusal (RuntimeError, ValueError...) counts
        return False
    return True


def _runs_in(support: Support, shapes: str, backend: str) -> bool:
    """Which edge cases a column leaves out, and why: see the module docstring."""
    column = columns.column(backend)
    if column.compiles and shapes == "dynamic" and not support.varies:
        return False
    return column.empty_cases or not support.has_empty


def _call(
    spec: OpSchema,
    support: Support,
    step: int,
    *,
    seed: int,
    permuted: bool,
    index: int,
    variant: int,
    may_vary,
    defaults: bool = True,
) -> Call:
    """Call ``index`` of a case: tensors at size ``step``, host arguments at ``variant``
    (0: the first value) where ``may_vary(arg, first, other)`` allows; plain values
    vary by opsdk's default only with ``defaults``."""
    gen = torch.Generator().manual_seed(seed)
    fixed, changed, varied, declared_names, by_default = [], [], [], [], False
    rank = max((len(t.sizes(0)) for t in support.tensor_specs()), default=0)

    def tensor(v):
        if not isinstance(v, TensorSpec):
            return v  # None in a Tensor?[]
        fixed.append(v.fixed)
        return _tensor(v, step, gen, permuted)

    def value(arg: Arg, v):
        if arg.is_tensor:
            return [tensor(x) for x in v] if isinstance(v, list) else tensor(v)
        declared_values = isinstance(v, ScalarSpec)
        if not declared_values and not defaults:
            return v
        values = v if declared_values else _default_values(arg, v, rank)
        first, other = values.at(0), values.at(variant)
        if variant == 0 or other == first or not may_vary(arg, first, other):
            return first
        nonlocal by_default
        changed.append(f"{arg.name} {first!r} -> {other!r}")
        varied.append(arg.name)
        if declared_values:
            declared_names.append(arg.name)
        by_default = by_default or not declared_values
        return other

    named = spec.by_name(support.args, support.kwargs)
    args: list = []
    kwargs: dict[str, object] = {}
    for arg in spec.args:
        if arg.name not in named:
            continue  # left to its default
        if arg.kwarg_only or len(args) < spec.args.index(arg):  # after a gap: by keyword
            kwargs[arg.name] = value(arg, named[arg.name])
        else:
            args.append(value(arg, named[arg.name]))
    note = f"{', '.join(changed)} on call {index}" if changed else ""
    return Call(args, kwargs, tuple(fixed), note, by_default, tuple(declared_names), tuple(varied))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_list(value) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(map(_is_int, value))


def _default_values(arg: Arg, value, rank: int) -> ScalarSpec:
    """How a plain value varies: see the module docstring."""
    if DIMS_NAME.fullmatch(arg.name):
        return Fixed(value)
    if _is_int(value) and DIM_NAME.fullmatch(arg.name):
        if not -rank <= value < rank:
            return Fixed(value)
        return OneOf(value, *(d for d in range(rank) if d != value % rank))
    if _int_list(value):
        return OneOf(value, *([v + step for v in value] for step in (1, 2)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return OneOf(value, value + 1, value + 2)
    return Fixed(value)


def _may_vary(column: columns.Column, shapes: str, arg: Arg, first, other) -> bool:
    """Whether ``column`` may change ``arg`` from ``first`` to ``other`` in ``shapes``
    mode: a compiled graph takes only symbolic ints and int lists as inputs."""
    if not column.compiles:
        return True
    ints = all(_is_int(v) or _int_list(v) for v in (first, other))
    return shapes != "static" and arg.is_symbolic and ints


def _tensor(spec: TensorSpec, step: int, gen, permuted: bool) -> torch.Tensor:
    sizes = spec.sizes(step)
    if permuted:  # dense but dims reversed in memory: non-contiguous from 2 dims of size > 1
        order = tuple(reversed(range(len(sizes))))
        return _values(spec, tuple(sizes[d] for d in order), gen).permute(order)
    return _values(spec, sizes, gen)


_unread = False  # set by values_unread()


@contextlib.contextmanager
def values_unread():
    """While active, tensors are made without values (``torch.empty``): for a reader of
    shapes and dtypes only (``opsdk audit``), filling a large declared case costs time and
    memory for nothing."""
    global _unread
    before, _unread = _unread, True
    try:
        yield
    finally:
        _unread = before


def _values(spec: TensorSpec, sizes, gen) -> torch.Tensor:
    if _unread:
        return torch.empty(sizes, dtype=spec.dtype)
    if spec.dtype == torch.bool:
        return torch.randint(0, 2, sizes, generator=gen).bool()
    if spec.dtype.is_floating_point:
        if spec.value_range is None:
            return torch.randn(sizes, generator=gen).to(spec.dtype)
        low, high = spec.value_range
        return (torch.rand(sizes, generator=gen) * (high - low) + low).to(spec.dtype)
    low, high = spec.value_range or ((-10, 10) if spec.dtype.is_signed else (0, 10))
    return torch.randint(int(low), int(high), sizes, generator=gen).to(spec.dtype)


def map_tensors(value, fn):
    """Apply ``fn`` to every tensor in a nested args structure."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def tensors_of(value) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(value, found.append)
    return found


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The bytes of ``t``'s values in logical order, bitwise (a NaN equals itself): one
    snapshot for every check that asks whether a tensor's values changed."""
    plain = t.detach().resolve_conj().resolve_neg().cpu().contiguous()
    return plain.reshape(-1).view(torch.uint8).numpy().tobytes()


def on_device(call: Call, device: str) -> Call:
    """A copy of ``call`` with fresh tensors on ``device`` (inputs may be mutated);
    strides are kept, so a non-contiguous input stays non-contiguous."""
    move = lambda t: t.clone().to(device)  # noqa: E731
    return dataclasses.replace(
        call, args=map_tensors(call.args, move), kwargs=map_tensors(call.kwargs, move)
    )


def mark_static(call: Call, shapes: str) -> None:
    """Tell Dynamo which sizes of ``call``'s tensors stay: all of them in
    ``mark_static`` mode, the fixed ones (:attr:`Call.fixed`) in ``dynamic`` mode, so
    duck sizing never takes a fixed size for a growing one of the same value."""
    import torch._dynamo  # only compiled columns call this: eager cells never load Dynamo

    tensors = tensors_of([call.args, call.kwargs])
    if shapes == "mark_static":
        for t in tensors:
            torch._dynamo.mark_static(t)
    elif shapes == "dynamic":
        for t, dims in zip(tensors, call.fixed, strict=True):
            for d in dims:
                torch._dynamo.mark_static(t, d)
