"""Fusion patterns of an op package: registered once, with every graph backend the process has.

A fused op pays off only when a model's unfused torch code is replaced by it in graph
mode. npugraph_ex and TorchAir each keep a pattern pass (``register_replacement``, over
torch's inductor pattern matcher, read in ``patterns/pattern_pass_manager.py`` of the
torch-npu 2.13.0 wheel); a package registers its pattern with both through
:func:`register`:

- once per op: importing the package again (or a second op's package) adds nothing twice;
  a second op whose pattern is the same graph as a first's is not registered but carries
  the problem (``Pattern.problem``): torch would raise ``Duplicate pattern`` in the middle
  of a bring-up, or, skipping it, leave it silently dead;
- traced at every dtype the op's cases use (:func:`example_inputs`): a pattern traced at
  float32 does not match the casts a float16 graph holds;
- with every float argument of the op as a keyword of the pattern (torch's
  ``scalar_workaround``): the pattern is traced with a sentinel value, which then matches
  whatever value the model passes (its own eps), instead of the example's baked in;
- with the backends the host has: on an NPU host torch_npu's, offline the ones opsdk
  imports, which call :func:`connect` (until then a registration waits, as converters do).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch

from opsdk._runtime import spec
from opsdk._runtime.device import ensure_npu
from opsdk._runtime.inputs import TensorSpec, declared, default_support

__all__ = [
    "Pattern",
    "connect",
    "connected",
    "example_inputs",
    "keyword_scalars",
    "register",
    "registered",
    "registrations",
    "sentinels",
    "trace_fn",
]

# Backends that keep a pattern pass, by the module name torch_npu gives them.
BACKENDS = ("npugraph_ex", "torchair")


@dataclass
class Pattern:
    """One op's pattern as registered: the unfused ``search``, the fused ``replace`` (both
    take the op's arguments), and the float arguments matched as keywords (``scalars``).
    ``problem``: why the backends do not have it (a duplicate), once it was traced;
    ``failure``: what tracing it raised instead."""

    owner: str
    op: object
    search: Callable
    replace: Callable
    scalars: tuple[str, ...]
    extra_check: Callable | None = None
    options: dict = field(default_factory=dict)
    problem: str | None = None
    failure: Exception | None = None  # what tracing the search function raised
    printed: tuple[str, ...] = field(default=(), repr=False)

    def registration_calls(self) -> list[dict]:
        """The keyword arguments of one ``register_replacement`` call per dtype of the op's
        cases (:func:`example_inputs`)."""
        calls = []
        for inputs in example_inputs(self.op, self.scalars):
            kwargs = {
                "search_fn": self.search,
                "replace_fn": self.replace,
                "example_inputs": list(inputs),
                "scalar_workaround": sentinels(self.scalars) or None,
                # one op's dtypes may trace to one pattern: that is not a duplicate
                "skip_duplicates": True,
            }
            kwargs["extra_check"] = functools.partial(_numbers_only, self.scalars, self.extra_check)
            calls.append(kwargs | self.options)
        return calls


_patterns: dict[str, Pattern] = {}
_by_repr: dict[str, str] = {}  # a pattern's printed form -> the op that registered it
_backends: dict[str, Callable] = {}  # backend name -> its register_replacement
_tracers: dict[str, Callable] = {}  # backend name -> how its patterns are traced
_applied: dict[str, set[str]] = {name: set() for name in BACKENDS}


def sentinels(names: Iterable[str]) -> dict[str, float]:
    """A distinct, improbable float per scalar argument: torch turns the pattern's constant
    equal to it into a keyword, so the pattern matches any value the model passes."""
    return {name: 0.000123456789 * (i + 1) for i, name in enumerate(names)}


def _numbers_only(scalars: Sequence[str], extra_check: Callable | None, match) -> bool:
    """Refuse a match whose scalar is a tensor (a float Dynamo made a graph input under
    dynamic=True, as it does one read from a variable): the op's float argument cannot
    take it, and the graph stays as the model wrote it."""
    if any(isinstance(match.kwargs.get(name), torch.fx.Node) for name in scalars):
        return False
    return extra_check is None or extra_check(match)


def keyword_scalars(op_spec: spec.OpSchema) -> list[str]:
    """The op's arguments a pattern matches whatever their value: its floats (an eps)."""
    return [a.name for a in op_spec.args if a.type.split("?")[0] in ("float", "Scalar")]


def example_inputs(op, scalars: Sequence[str]) -> tuple[tuple, ...]:
    """The op's arguments for tracing a pattern, one tuple per distinct dtype of its cases
    (declared in specs.py, else the default case), minus the ``scalars`` (traced as
    sentinels). Cases with an empty tensor are left out: their graphs fold away."""
    op_spec = spec.of(op)
    declaration = declared(op_spec.qualname)
    supports = declaration.cases if declaration else (default_support(op_spec),)
    examples: dict[tuple, tuple] = {}
    for support in supports:
        if support.has_empty:
            continue
        values = op_spec.by_name(support.args, support.kwargs)
        key = tuple(t.dtype for t in support.tensor_specs())
        if key in examples:
            continue
        examples[key] = tuple(
            _example(values[a.name] if a.name in values else a.default)
            for a in op_spec.args
            if a.name not in scalars
        )
    return tuple(examples.values())


def _example(value):
    if isinstance(value, list):
        return [_example(v) for v in value]
    if isinstance(value, TensorSpec):
        sizes = value.sizes(0)
        if value.dtype.is_floating_point:
            return torch.randn(sizes).to(value.dtype)
        return torch.ones(sizes, dtype=value.dtype)
    return getattr(value, "at", lambda i: value)(0)  # a ScalarSpec: its first value


def register(
    op,
    search: Callable,
    replace: Callable,
    *,
    scalars: Sequence[str] | None = None,
    extra_check: Callable | None = None,
    **options,
) -> Pattern:
    """Register ``search`` -> ``replace`` as ``op``'s fusion pattern, once per process.

    ``scalars``: the float arguments matched as keywords (default: every float or
    Scalar argument of the op); ``extra_check`` and ``options`` (``search_fn_pattern``,
    ``trace_fn``) go to ``register_replacement`` as they are. A second call for the same
    op (the package imported again) returns the first registration, not the one-registry
    rule of :mod:`opsdk._registry`: a module imported again makes new, unequal functions,
    and the pattern matcher cannot drop a pattern it holds. The pattern is traced
    when a backend takes it (importing torch's pattern matcher costs seconds an eager user
    need not pay).
    """
    op_spec = spec.of(op)
    if op_spec.qualname in _patterns:
        return _patterns[op_spec.qualname]
    _check_signature(op_spec, search, "search")
    _check_signature(op_spec, replace, "replace")
    names = keyword_scalars(op_spec) if scalars is None else list(scalars)
    pattern = Pattern(op_spec.qualname, op, search, replace, tuple(names), extra_check, options)
    _patterns[pattern.owner] = pattern
    if not _backends and ensure_npu().real:
        _connect_host()
    _apply()
    return pattern


def _connect_host() -> None:
    """On an NPU host, torch_npu's own npugraph_ex and TorchAir (not checkable here)."""
    for name in BACKENDS:
        try:
            module = importlib.import_module(f"torch_npu.dynamo.{name}")
        except ImportError:
            continue  # a torch_npu built without it: nothing to register with
        _backends[name] = module.register_replacement
        _tracers[name] = _tracer(module)


def _check_signature(op_spec: spec.OpSchema, fn: Callable, what: str) -> None:
    params = list(inspect.signature(fn).parameters)
    expected = [a.name for a in op_spec.args]
    if params != expected:
        raise TypeError(
            f"the {what} function of {op_spec.qualname}'s pattern takes {params}: give it the "
            f"op's arguments, {expected}, in that order"
        )


def _printed(calls: list[dict]) -> tuple[str, ...]:
    """The pattern's printed form per dtype, as torch's duplicate check compares them."""
    from torch._inductor.pattern_matcher import PatternPrettyPrinter, fwd_only, gen_pattern

    return tuple(
        PatternPrettyPrinter.run(
            gen_pattern(c["search_fn"], c["example_inputs"], fwd_only, c["scalar_workaround"])
        )
        for c in calls
    )


def _traced(pattern: Pattern) -> list[dict]:
    """The pattern's registration calls, once its printed forms are known: a pattern
    another op registered first gets ``problem`` (the matcher would keep only one)."""
    calls = pattern.registration_calls()
    if not pattern.printed:
        pattern.printed = _printed(calls)
        holders = {_by_repr[p] for p in pattern.printed if p in _by_repr} - {pattern.owner}
        if holders:
            pattern.problem = (
                f"duplicate registration: the fusion pattern of {pattern.owner} is the one "
                f"{sorted(holders)[0]} registered; the pattern matcher keeps the first and the "
                "other never fires: fuse into one op, or make the search functions differ"
            )
        else:
            _by_repr.update(dict.fromkeys(pattern.printed, pattern.owner))
    return calls


def has_pattern(op: spec.OpSchema) -> bool:
    """Whether the op registers a fusion pattern (what gives it ``fusion`` cells)."""
    return registered(op.qualname) is not None


def registered(qualname: str) -> Pattern | None:
    """The pattern ``qualname`` (``ns::name[.overload]``) registered, if any."""
    return _patterns.get(qualname)


def connect(name: str, module) -> None:
    """Backend ``name`` (one of :data:`BACKENDS`), its package ``module``, is imported:
    register every pattern with it now, and later ones as they come."""
    if _backends.get(name) is not module.register_replacement:
        _backends[name] = module.register_replacement
        _tracers[name] = _tracer(module)
    _apply()


def _tracer(module) -> Callable:
    """How ``register_replacement`` traces a pattern for the backend ``module``: torch's
    ``fwd_only`` with the backend's own decompositions (``_utils.get_npu_default_
    decompositions``, what its AOT graphs are made with). torch's default table turns
    ``.float()`` into ``prims.convert_element_type`` where the backend's graph keeps
    ``aten._to_copy``: a pattern with a cast would never fire."""
    from torch._inductor.pattern_matcher import fwd_only
    from torch.fx._lazy_graph_module import _use_lazy_graph_module

    decompositions = importlib.import_module(f"{module.__name__}._utils")

    def trace(fn, args, *, get_decomp_fn=None, **kwargs):
        # Lazy graph modules, as inductor's own pattern passes trace: the matcher reads a
        # traced graph's nodes, and generating its code (every match traces the search
        # and replacement functions again) would be wasted.
        with _use_lazy_graph_module(True):
            return fwd_only(
                fn, args, get_decomp_fn=decompositions.get_npu_default_decompositions, **kwargs
            )

    return trace


def trace_fn(backend: str) -> Callable:
    """The tracer patterns are registered with for ``backend`` (``npugraph_ex``,
    ``torchair``), torch's ``fwd_only`` when it is not connected."""
    from torch._inductor.pattern_matcher import fwd_only

    return _tracers.get(backend, fwd_only)


def registrations() -> tuple:
    """What the pattern passes hold now: per connected backend, its ``register_replacement``
    and the ops registered with it (a key for what a pass does to a graph,
    :func:`opsdk.harness.pattern_pass.once`)."""
    return tuple((n, r, frozenset(_applied[n])) for n, r in _backends.items())


def connected() -> tuple[str, ...]:
    """The backends patterns are registered with, in this process."""
    return tuple(_backends)


def _apply() -> None:
    for name, register_replacement in _backends.items():
        for owner, pattern in _patterns.items():
            if owner in _applied[name]:
                continue
            _applied[name].add(owner)
            try:
                calls = _traced(pattern)
            except Exception as err:  # noqa: BLE001 - the op's fault, told by its fusion cells
                pattern.failure = err  # e.g. the scaffold's ImplementMe: the backend stays up
                continue
            if pattern.problem is None:
                for call in calls:
                    register_replacement(**({"trace_fn": _tracers[name]} | call))
