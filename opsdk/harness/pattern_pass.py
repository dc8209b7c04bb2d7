"""What a fusion pass did to a graph: did an op's pattern fire, and if not, where it differed.

npugraph_ex and TorchAir apply the patterns registered with them
(:mod:`opsdk._runtime.patterns`) in one pass after AOT; :func:`observed` records each
run of it (the graph before as text, the graph module after), :func:`fused` counts the
op's nodes a pass left, and :func:`why_not` compares the graph the pass was handed with
the pattern traced at the same dtypes, to name the node where they part (a cast, a view,
a scalar baked into the pattern). :func:`near_miss` makes the search function's graph
with one literal changed: a computation the op does not do, where the pattern must not
fire.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.fx

from opsdk._runtime import patches, patterns

__all__ = ["PassRun", "fused", "near_miss", "observed", "why_not"]

# aten ops that only change a tensor's dtype or how it is viewed: the usual reasons a
# pattern traced at one dtype or shape mode does not match another's graph.
_CASTS = {"_to_copy", "to", "convert_element_type", "type_as"}
_VIEWS = {"view", "reshape", "_unsafe_view", "expand", "squeeze", "unsqueeze", "permute", "t"}
_SYMBOLIC = {"sym_size", "sym_numel", "sym_stride"}


@dataclass
class PassRun:
    """One run of a backend's fusion pass: ``before`` the graph's text, ``after`` the
    graph module it rewrote."""

    backend: str
    before: str
    after: torch.fx.GraphModule


@contextlib.contextmanager
def observed() -> Iterator[list[PassRun]]:
    """The fusion passes run while the block runs, in order."""
    runs: list[PassRun] = []
    with patches.pattern_passes_observed(lambda b, before, gm: runs.append(PassRun(b, before, gm))):
        yield runs


def _is_op(node: torch.fx.Node, op) -> bool:
    return node.op == "call_function" and node.target in (op, getattr(op, "overloadpacket", None))


def fused(run: PassRun, op) -> int:
    """How many nodes call ``op`` (an OpOverload) after the pass."""
    return sum(_is_op(n, op) for n in run.after.graph.nodes)


def _name(target) -> str:
    return getattr(target, "__name__", str(target)).split(".")[0]


def _literals(node: torch.fx.Node) -> list:
    return [a for a in node.args[1:] if isinstance(a, (int, float)) and not isinstance(a, bool)]


def why_not(pattern: patterns.Pattern, graph: torch.fx.Graph, inputs: list) -> str:
    """Where ``graph`` (one the pass left unfused) parts from ``pattern`` traced at the
    dtypes of ``inputs`` (the op's arguments): the first node whose kind the pattern
    lacks, or whose literal differs (a scalar the pattern baked in)."""
    traced = _pattern_graph(pattern, inputs)
    if traced is None:
        return (
            "the pattern was not traced at these inputs' dtypes: declare them in specs.py "
            "so that opsdk.patterns registers the pattern for them"
        )
    kinds = {_name(n.target) for n in traced.graph.nodes if n.op == "call_function"}
    literals: dict[str, list] = {}
    for n in traced.graph.nodes:
        if n.op == "call_function":
            literals.setdefault(_name(n.target), []).append(_literals(n))
    sentinels = set(patterns.sentinels(pattern.scalars).values())
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        kind = _name(node.target)
        if kind not in kinds:
            what = (
                "a cast"
                if kind in _CASTS
                else "a view"
                if kind in _VIEWS
                else "a symbolic size"
                if kind in _SYMBOLIC
                else "an op"
            )
            return (
                f"the graph has {what} the pattern lacks, at node {node.name} ({kind}): write "
                "the search function so that it traces to the graph a model makes"
            )
        mine = _literals(node)
        theirs = [v for v in literals.get(kind, []) if len(v) == len(mine)]
        baked = [lit for lit in theirs if lit and not set(lit) & sentinels]
        if mine and baked and all(lit != mine for lit in theirs):
            return (
                f"a scalar baked into the pattern: node {node.name} ({kind}) has {mine}, the "
                f"pattern {baked[0]}; pass it as an argument of the op (a float argument "
                "is matched whatever its value)"
            )
    return (
        "the graph holds every node of the pattern: an extra check of the registration "
        "refused the match (e.g. one that wants static shapes)"
    )


def _pattern_graph(pattern: patterns.Pattern, inputs: list) -> torch.fx.GraphModule | None:
    """The search function as the pattern was traced, at the registration whose tensors
    have the dtypes of ``inputs``."""
    from torch._inductor.pattern_matcher import fwd_only

    wanted = [t.dtype for t in inputs if isinstance(t, torch.Tensor)]
    for call in pattern.registration_calls():
        examples = call["example_inputs"]
        if [t.dtype for t in examples if isinstance(t, torch.Tensor)] == wanted:
            return fwd_only(pattern.search, _with_sentinels(pattern, examples))
    return None


def _with_sentinels(pattern: patterns.Pattern, examples: list) -> list:
    """The search function's arguments: ``examples`` with the scalars' sentinels put in."""
    values, given = patterns.sentinels(pattern.scalars), iter(examples)
    names = inspect.signature(pattern.search).parameters
    return [values[n] if n in values else next(given) for n in names]


def near_miss(pattern: patterns.Pattern, inputs: list) -> tuple[torch.fx.GraphModule, str] | None:
    """The search function traced at ``inputs`` (the op's arguments) with its first number
    literal that is not one of the op's scalars changed, and what changed; None when the
    graph has no such literal. It takes the op's arguments as the search function does."""
    from torch._inductor.pattern_matcher import fwd_only

    scalars = patterns.sentinels(pattern.scalars)
    names = list(inspect.signature(pattern.search).parameters)
    traced = [scalars.get(n, v) for n, v in zip(names, inputs, strict=True)]
    graph = fwd_only(pattern.search, traced)
    for node in graph.graph.nodes:
        if node.op != "call_function" or _name(node.target) in _VIEWS:
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
