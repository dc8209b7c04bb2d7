"""The cases each column runs, derived from an op's input specs (:mod:`opsdk.runtime.inputs`).

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
  do the ``static_dims`` a spec declares (sizes the op fixes).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch

from opsdk.harness import columns
from opsdk.harness.model import CellFailure
from opsdk.runtime.inputs import F32, Support, TensorSpec, declared
from opsdk.runtime.spec import Arg, OpSpec

# Size step of each call of a case, per shape mode (see TensorSpec.sizes).
STEPS = {
    "static": (0, 0, 0),
    "mark_static": (0, 0, 0),
    "dynamic": (0, 1, 2),
}
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


@dataclass
class Call:
    """One call's arguments (CPU tensors; the runner moves them to the device)."""

    args: list
    kwargs: dict


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
    spec: OpSpec,
    shapes: str,
    backend: str,
    *,
    steps: Sequence[int] | None = None,
    vary_last: bool = False,
) -> list[Case]:
    """The op's cases for the ``backend`` column in ``shapes`` mode (edge cases a
    column cannot test are left out). ``steps`` overrides the per-call size steps;
    ``vary_last`` changes every Python scalar on the last call (to catch one baked
    into a graph)."""
    declaration = declared(spec.qualname)
    if declaration is None:
        supports, tolerances = [("", default_support(spec), False)], {}
    else:
        supports = [(_label(s), s, False) for s in declaration.cases]
        if declaration.non_contiguous:
            supports.append((f"non-contiguous {supports[0][0]}", declaration.cases[0], True))
        tolerances = declaration.tolerances
    steps = tuple(STEPS[shapes] if steps is None else steps)
    result = []
    for index, (label, support, permuted) in enumerate(supports):
        if not _runs_in(support, shapes, backend):
            continue
        calls = [
            _call(
                spec,
                support,
                step,
                seed=1234 + 100 * index + i,
                permuted=permuted,
                vary=vary_last and i == len(steps) - 1,
            )
            for i, step in enumerate(steps)
        ]
        result.append(Case(label, calls, tolerances))
    return result


def _runs_in(support: Support, shapes: str, backend: str) -> bool:
    """Which edge cases a column leaves out, and why: see the module docstring."""
    column = columns.get(backend)
    if column.compiles and shapes == "dynamic" and not support.varies:
        return False
    return column.empty_cases or not support.has_empty


def _label(support: Support) -> str:
    return repr(support)[len("Support(") : -1]


def default_support(spec: OpSpec) -> Support:
    """The one case an op without a declaration runs (also an attached package's first
    declared case)."""
    args, kwargs = [], {}
    for arg in spec.args:
        value = _default_value(arg)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return Support(*args, **kwargs)


def _default_value(arg: Arg):
    if arg.is_tensor:
        return [F32(*DEFAULT_DIMS)] * 2 if arg.is_list else F32(*DEFAULT_DIMS)
    if arg.has_default:
        return arg.default
    if arg.is_optional:
        return None
    sample = _SCALAR_SAMPLES.get(arg.type.split("[")[0])
    return [sample] * (arg.size or 1) if arg.is_list else sample


def _call(spec: OpSpec, support: Support, step: int, *, seed: int, permuted: bool, vary: bool):
    gen = torch.Generator().manual_seed(seed)

    def value(v):
        if isinstance(v, TensorSpec):
            return _tensor(v, step, gen, permuted)
        if isinstance(v, list):
            return [value(x) for x in v]
        return _varied(v) if vary else v

    positional = [a.name for a in spec.args if not a.kwarg_only]
    named = dict(zip(positional, support.args, strict=False)) | support.kwargs
    args, kwargs = [], {}
    for arg in spec.args:
        if arg.name not in named:
            continue  # left to its default
        if arg.kwarg_only:
            kwargs[arg.name] = value(named[arg.name])
        else:
            args.append(value(named[arg.name]))
    return Call(args, kwargs)


def _tensor(spec: TensorSpec, step: int, gen, permuted: bool) -> torch.Tensor:
    sizes = spec.sizes(step)
    if permuted:  # dense but dims reversed in memory: non-contiguous from 2 dims of size > 1
        order = tuple(reversed(range(len(sizes))))
        return _values(spec, tuple(sizes[d] for d in order), gen).permute(order)
    return _values(spec, sizes, gen)


def _values(spec: TensorSpec, sizes, gen) -> torch.Tensor:
    if spec.dtype == torch.bool:
        return torch.randint(0, 2, sizes, generator=gen).bool()
    if spec.dtype.is_floating_point:
        if spec.value_range is None:
            return torch.randn(sizes, generator=gen).to(spec.dtype)
        low, high = spec.value_range
        return (torch.rand(sizes, generator=gen) * (high - low) + low).to(spec.dtype)
    low, high = spec.value_range or (-10, 10)
    return torch.randint(int(low), int(high), sizes, generator=gen).to(spec.dtype)


def _varied(value):
    """A different Python scalar (bools, strings and others kept)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return value + 1 if isinstance(value, int) else value * 1.5 + 0.25


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


def on_device(call: Call, device: str) -> Call:
    """A copy of ``call`` with fresh tensors on ``device`` (inputs may be mutated);
    strides are kept, so a non-contiguous input stays non-contiguous."""
    move = lambda t: t.clone().to(device)  # noqa: E731
    return Call(map_tensors(call.args, move), map_tensors(call.kwargs, move))
