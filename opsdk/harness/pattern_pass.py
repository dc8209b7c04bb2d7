"""What a fusion pass did to a graph: did an op's pattern fire, and if not, where it differed.

npugraph_ex and TorchAir apply the patterns registered with them
(:mod:`opsdk._runtime.patterns`) in one pass after AOT; :func:`observed` records each
run of it (the graph before as text, the graph module after), :func:`fused` counts the
op's nodes a pass left, and :func:`why_not` compares the graph the pass was handed with
the pattern traced at the same dtypes, to name the node where they part (a cast, a view,
a scalar baked into the pattern). :func:`near_miss` makes the search function's graph
with one literal changed: a computation the op does not do, where the pattern must not
fire. :func:`traced` traces a function as the backend's patterns are, for :func:`apply`
(the pass without a compile), and :func:`once` keeps what a pass did to such a graph for
the process: it depends on the inputs and the registered patterns only.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import torch
import torch.fx
import torch.utils._pytree as pytree

from opsdk._runtime import patches, patterns
from opsdk.harness.failures import chain, first_line

__all__ = [
    "PassRun",
    "apply",
    "baked_scalar",
    "fused",
    "near_miss",
    "observed",
    "once",
    "op_nodes",
    "traced",
    "why_not",
]

# aten ops that only change a tensor's dtype or how it is viewed: the usual reasons a
# pattern traced at one dtype or shape mode does not match another's graph.
_CASTS = {"_to_copy", "to", "convert_element_type", "type_as", "npu_dtype_cast"}
_VIEWS = {"view", "reshape", "_unsafe_view", "expand", "squeeze", "unsqueeze", "permute", "t"}
_SYMBOLIC = {"sym_size", "sym_numel", "sym_stride"}

# What torch's matcher raises when a search function's argument is no keyword of its pattern.
_UNMATCHED_SCALAR = "Not all inputs to pattern found in match.kwargs"
_T = TypeVar("_T")
_once: dict[tuple, Any] = {}  # see :func:`once`: each key's value is its compute()'s


@dataclass
class PassRun:
    """One run of a backend's fusion pass (``npugraph_ex`` or ``torchair``): copies of
    the graph module ``before`` and ``after`` it."""

    backend: str
    before: torch.fx.GraphModule
    after: torch.fx.GraphModule


@contextlib.contextmanager
def observed() -> Iterator[list[PassRun]]:
    """The fusion passes run while the block runs, in order."""
    runs: list[PassRun] = []
    with patches.pattern_passes_observed(lambda *run: runs.append(PassRun(*run))):
        yield runs


def op_nodes(graph_module: torch.fx.GraphModule, op) -> list[str]:
    """The nodes of ``graph_module`` that call ``op`` (an OpOverload)."""
    targets = (op, getattr(op, "overloadpacket", None))
    return [
        n.name for n in graph_module.graph.nodes if n.op == "call_function" and n.target in targets
    ]


def fused(run: PassRun, op) -> int:
    """How many nodes call ``op`` after the pass."""
    return len(op_nodes(run.after, op))


def _name(target) -> str:
    """An aten op's name with its overload (``add.Scalar``): overloads trace apart."""
    return getattr(target, "__name__", str(target))


def _base(kind: str) -> str:
    return kind.split(".")[0]


def _literals(node: torch.fx.Node) -> list:
    return [a for a in node.args[1:] if isinstance(a, (int, float)) and not isinstance(a, bool)]


def why_not(pattern: patterns.Pattern, run: PassRun) -> str:
    """Where the graph of ``run`` (one the pass left unfused) parts from ``pattern`` traced
    at the graph's dtypes: those it was not traced at, or the first node whose kind the pattern
    lacks (a cast, a view), or whose literal differs (a scalar baked into the pattern)."""
    graph = list(run.after.graph.nodes)
    dtypes = _dtypes(graph)
    calls = {_dtypes_of(c["example_inputs"]): c for c in pattern.registration_calls()}
    call = calls.get(dtypes) or next((c for k, c in calls.items() if dtypes and dtypes <= k), None)
    if call is None:
        traced = " and ".join(_names(k) for k in calls) or "no dtype"
        return (
            f"the pattern was traced at {traced}, the graph computes in {_names(dtypes)}: "
            "its casts differ; declare these dtypes in the op's specs.py (the pattern is "
            "traced at every dtype of its cases)"
        )
    trace = patterns.trace_fn(run.backend)
    traced = trace(pattern.search, _with_sentinels(pattern, call["example_inputs"]))
    kinds = {_name(n.target) for n in traced.graph.nodes if n.op == "call_function"}
    literals: dict[str, list] = {}
    for n in traced.graph.nodes:
        if n.op == "call_function":
            literals.setdefault(_name(n.target), []).append(_literals(n))
    sentinels = set(patterns.sentinels(pattern.scalars).values())
    for node in graph:
        if node.op != "call_function":
            continue
        kind = _name(node.target)
        if kind not in kinds:
            return (
                f"the graph has {_what(kind)} the pattern lacks, at node {node.name} ({kind}): "
                "write the search function as the model's code traces"
            )
        mine = _literals(node)
        theirs = [v for v in literals.get(kind, []) if len(v) == len(mine)]
        baked = [lit for lit in theirs if lit and not set(lit) & sentinels]
        if mine and baked and all(lit != mine for lit in theirs):
            return (
                f"a scalar baked into the pattern: node {node.name} ({kind}) has {mine}, the "
                f"pattern {baked[0]}; let the op take it as a float argument (matched whatever "
                "its value) and use that argument in the search function"
            )
    return (
        "the graph holds every node of the pattern: an extra check of the registration "
        "refused the match (e.g. one that wants static shapes, or a scalar that is a tensor)"
    )


def baked_scalar(err: BaseException) -> str | None:
    """Why a pass failed, when ``err`` (or an error it chains) is torch's matcher finding a
    scalar of the search function that is no keyword of the pattern; else None. A model's
    compile fails with it (on an NPU host too), it does not just miss the fusion."""
    unmatched = next((e for e in chain(err) if _UNMATCHED_SCALAR in str(e)), None)
    if unmatched is None:
        return None
    return (
        f"{first_line(unmatched)}: a scalar baked into the pattern: the search function's "
        "scalar is not a keyword of the pattern (a number written in its place, or an argument "
        "left out of the scalars matched by name), so torch's matcher cannot hand it to the "
        "replacement; use the argument in the search function and let opsdk.patterns.register "
        "match it"
    )


def _what(kind: str) -> str:
    if _base(kind) in _CASTS:
        return "a cast"
    if _base(kind) in _VIEWS:
        return "a view"
    return "a symbolic size" if _base(kind) in _SYMBOLIC else "an op"


def _dtypes(graph: list[torch.fx.Node]) -> frozenset:
    """The dtypes of the graph's tensor inputs."""
    values = [n.meta.get("val") for n in graph if n.op == "placeholder"]
    return frozenset(v.dtype for v in values if isinstance(v, torch.Tensor))


def _dtypes_of(values) -> frozenset:
    return frozenset(v.dtype for v in values if isinstance(v, torch.Tensor))


def _names(dtypes) -> str:
    return "/".join(sorted(str(d).removeprefix("torch.") for d in dtypes)) or "no tensor"


def _with_sentinels(pattern: patterns.Pattern, examples: list) -> list:
    """The search function's arguments: ``examples`` with the scalars' sentinels put in."""
    values, given = patterns.sentinels(pattern.scalars), iter(examples)
    names = inspect.signature(pattern.search).parameters
    return [values[n] if n in values else next(given) for n in names]


def traced(fn, inputs: list, backend: str) -> torch.fx.GraphModule:
    """``fn`` traced at ``inputs`` as ``backend``'s patterns are, over fake copies of them:
    each node carries the fake value the pass reads (as after AOT), in one trace."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    fakes = pytree.tree_map_only(torch.Tensor, mode.from_tensor, inputs)
    with mode:
        return patterns.trace_fn(backend)(fn, fakes)


def near_miss(
    pattern: patterns.Pattern, inputs: list, backend: str
) -> tuple[torch.fx.GraphModule, str] | None:
    """The search function traced at ``inputs`` (the op's arguments) with its first number
    literal that is not one of the op's scalars changed, and what changed; None when the
    graph has no such literal. Traced as ``backend``'s patterns are (:func:`traced`); it
    takes the op's arguments, as the search function does."""
    scalars = patterns.sentinels(pattern.scalars)
    names = list(inspect.signature(pattern.search).parameters)
    given = [scalars.get(n, v) for n, v in zip(names, inputs, strict=True)]
    graph = traced(pattern.search, given, backend)
    for node in graph.graph.nodes:
        if node.op != "call_function" or _base(_name(node.target)) in _VIEWS:
            continue  # a view's numbers are sizes: another shape, not another computation
        for i, arg in enumerate(node.args[1:], start=1):
            if (
                isinstance(arg, bool)
                or not isinstance(arg, (int, float))
                or arg in scalars.values()
            ):
                continue
            other = arg * 2 + 1 if isinstance(arg, int) else arg * 1.5 + 0.25
            node.args = (*node.args[:i], other, *node.args[i + 1 :])
            graph.recompile()
            return graph, f"{node.name} ({_name(node.target)}) with {other} for {arg}"
    return None


def apply(graph: torch.fx.GraphModule, backend: str) -> PassRun:
    """``backend``'s own fusion pass (npugraph_ex's or TorchAir's pattern pass manager)
    applied to ``graph`` (made by :func:`traced`), as it is applied after AOT; without a
    compile, for a graph only the pass is asked about (a near miss)."""
    manager = importlib.import_module(f"{backend}.patterns.pattern_pass_manager")
    with observed() as runs:
        manager._pattern_manager().apply_pass(graph)
    return runs[0]


def once(what: tuple, inputs: list, compute: Callable[[], _T]) -> _T:
    """``compute()``, once per process for ``what`` traced at ``inputs`` (their dtypes,
    sizes and strides, the other values as they are) and the patterns registered now:
    nothing else changes what a pass does to a graph traced that way, not the shape mode of
    the cell asking."""
    key = (what, tuple(map(_traced_as, pytree.tree_leaves(inputs))), patterns.registrations())
    if key not in _once:
        _once[key] = compute()
    return _once[key]


def _traced_as(value) -> tuple:
    if isinstance(value, torch.Tensor):
        return (value.dtype, value.device.type, tuple(value.shape), value.stride())
    return (type(value), repr(value))
