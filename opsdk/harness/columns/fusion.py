"""Column ``fusion``: the op's fusion pattern fires, changes no result, and spares a near miss.

For an op whose package registers a pattern (``opsdk new --pattern``: patterns.py,
:mod:`opsdk._runtime.patterns`), every case's search function (the unfused torch code the
op replaces) is compiled through TorchAir GE and through npugraph_ex, with the fusion
pass on for the package's own patterns (offline torch_npu's are off:
:data:`opsdk.offline.torchair.OFFLINE_PATTERNS`). Each cell proves, in its own layer:

- ``pattern-duplicate``: the pattern is registered (no other op registered it first);
- ``pattern-not-fired``: every graph the pass saw holds the op in place of the searched
  subgraph (counted), and TorchAir's GE graph holds a node of the op's IR; if not, where
  the graph parted from the pattern (a cast, a view, a scalar baked in);
- ``pattern-results``: the compiled search function equals it run eagerly, within the
  op's tolerances, on every call, and with other scalars (eps included);
- ``pattern-near-miss``: the search function with one literal changed (a computation the
  op does not do, made by opsdk) is left alone.

Cost (bench/fusion_cost.py): the first cases of every dtype are compiled together, once
for both backends: one model calls the search function once per dtype, as a model's
layers do (one Dynamo and AOT trace, :func:`opsdk.harness.core.shared_trace.fan_out`; each
backend runs its own pass, which must fire once per call, and its own lowering). Only
when that goes wrong is each case compiled alone per backend, and that verdict stands.
A new scalar would be a new compile (a model's scalars are literals), and a case that
differs from a compiled one only in layout (non-contiguous) traces alike: other
scalars, those cases and the near miss are put to npugraph_ex's pass
(the same patterns as TorchAir's) on the search function's traced graph instead, which
must fuse once and compute what the search function does. What that pass does depends on
the inputs' dtypes, sizes and strides, not on the shape mode: it runs once per process
for each (:func:`opsdk.harness.pattern_pass.once`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch
import torch._dynamo

from opsdk._runtime import irdef, patterns
from opsdk.errors import SetupError
from opsdk.harness import graph_hook, pattern_pass
from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.core import ge_backend, npugraph_backend, shared_trace
from opsdk.harness.core.compare import assert_same
from opsdk.harness.core.compile_call import compile_call
from opsdk.harness.failures import as_failure
from opsdk.harness.variants.cases import (
    STEPS,
    Case,
    cases,
    mark_static,
    on_device,
    tensors_of,
)

# The backends a search function is compiled through: their pass manager's module,
# and the layer a failure to compile the fused graph belongs to.
_PASS_OF = {"ge": "torchair", "npugraph_ex": "npugraph_ex"}
_NAME_OF = {v: k for k, v in _PASS_OF.items()}
_COMPILE_LAYER = {"ge": "converter", "npugraph_ex": "capture"}


def run(cell: Cell, dump_dir=None) -> None:
    pattern = patterns.registered(cell.op.spec.qualname)
    if pattern is None:
        raise CellSkipped("the op registers no fusion pattern (opsdk new --pattern writes one)")
    backends = {"ge": ge_backend.backend(cell.profile), "npugraph_ex": npugraph_backend.backend()}
    if pattern.failure is not None:  # known once a backend took the pattern (just now)
        raise as_failure(pattern.failure, default_layer="pattern-not-fired")
    if pattern.problem is not None:
        raise CellFailure("pattern-duplicate", pattern.problem)
    # The declared scalars and sizes; in dynamic mode a second call grows the sizes. The
    # first call's scalars, changed, go to the pass (:func:`_keeps_other_scalars`).
    steps = STEPS[cell.shapes][: 2 if cell.shapes == "dynamic" else 1]
    every = cases(cell.op.spec, cell.shapes, cell.column, steps=steps, vary_from=1)
    firsts: dict[tuple, Case] = {}  # each dtype's first case; the others are layouts of one
    for case in every:
        first = case.calls[0]
        firsts.setdefault(tuple(t.dtype for t in tensors_of([first.args, first.kwargs])), case)
    with pattern_pass.observed() as runs:
        try:
            for case in firsts.values():  # a pattern too loose is told before the rest
                with case.named():
                    _spares_a_near_miss(cell, pattern, case)
            compiled = len(runs)  # the first pass of the compiled search function: drawn
            _fires_and_keeps_results(cell, pattern, list(firsts.values()), backends)
            _keeps_other_scalars(cell, pattern, every)
        except (CellSkipped, SetupError):
            raise
        except Exception as err:  # the pass that failed, drawn for a report (if asked)
            graph_hook.hand_over_pass(cell, runs[-1] if runs else None, err)
            raise
    graph_hook.hand_over_pass(cell, runs[compiled] if len(runs) > compiled else None, None)


def _fires_and_keeps_results(cell: Cell, pattern, firsts: list[Case], backends: dict) -> None:
    """The calls of each dtype's first case through one compile for every dtype and both
    backends: one model calling the search function once per dtype, as a model's layers
    do (one Dynamo and AOT trace, each backend's own pass and lowering, the pattern fired
    once per dtype). Where that goes wrong, each case compiles alone with each backend
    alone, and that verdict stands (sharing never decides a result)."""

    def alone(case: Case) -> None:
        for name, backend in backends.items():
            _compiled_calls(cell, pattern, [case], {name: backend})

    _together_else_each(firsts, lambda: _compiled_calls(cell, pattern, firsts, backends), alone)


def _together_else_each(
    group: list[Case], together: Callable[[], None], alone: Callable[[Case], None]
) -> None:
    """``together()``, the ``group``'s cases checked at once; where that goes wrong,
    ``alone(case)`` for each case, named, and that verdict stands: sharing saves work,
    it never decides a result."""
    try:
        together()
    except (CellSkipped, SetupError):
        raise
    except Exception:  # noqa: BLE001 - told again, in its layer, by each case alone
        for case in group:
            with case.named():
                alone(case)


def _compiled_calls(cell: Cell, pattern, group: list[Case], backends: dict) -> None:
    """The calls of the ``group``'s cases, side by side, through the search function
    compiled by ``backends`` (one, or several sharing a trace), once per case and with
    the case's first call's scalars, constants as a model's are (``self.eps``). Every
    pass run fused the op once per case; every result equals the search function run
    eagerly."""
    op = cell.op.overload()
    torch._dynamo.reset()
    backend = shared_trace.fan_out(backends) if len(backends) > 1 else [*backends.values()][0]
    scalars = [_split(cell, case.calls[0])[1] for case in group]
    compiled = _compiled(pattern, backend, cell.shapes, "_".join(backends), scalars)
    with (
        pattern_pass.observed() as runs,
        ge_backend.recorded_graphs() as recorded,
        npugraph_backend.rebuilt_outputs_unwarned(),
    ):
        for i, calls in enumerate(zip(*(case.calls for case in group), strict=True)):
            expected = [
                pattern.search(**_split(cell, on_device(call, "npu"))[0], **given)
                for call, given in zip(calls, scalars, strict=True)
            ]
            tensors: list[torch.Tensor] = []
            for call in calls:
                npu_call = on_device(call, "npu")
                mark_static(npu_call, cell.shapes)
                tensors += _split(cell, npu_call)[0].values()
            for name in backends:
                seen = len(runs)
                try:
                    with shared_trace.running(name):
                        actual = compiled(*tensors)
                except Exception as err:  # noqa: BLE001 - classified into a layer below
                    raise _failure(err, name) from err
                for run in runs[seen:]:
                    _require_fired(cell, pattern, op, run, _NAME_OF[run.backend], len(group))
                for case, got, want in zip(group, actual, expected, strict=True):
                    what = f"{name}, call {i}: the compiled search function"
                    _require_same(got, want, case, what)
    for name in backends:
        if not any(r.backend == _PASS_OF[name] for r in runs):
            raise CellFailure(
                "pattern-not-fired",
                f"{name}: the fusion pass never ran: turn pattern_fusion_pass on",
            )
    if "ge" in backends:
        _require_ge_node(cell, [g.graph for g in recorded.forward()], len(group))


def _keeps_other_scalars(cell: Cell, pattern, every: list[Case]) -> None:
    """Every case's first call with its scalars varied (:func:`_varied`: eps one larger),
    put to npugraph_ex's pass together (:func:`_fused_with_other_scalars`); where that
    goes wrong, each case alone, and that verdict stands."""
    _together_else_each(
        every,
        lambda: _fused_with_other_scalars(cell, pattern, every),
        lambda case: _fused_with_other_scalars(cell, pattern, [case]),
    )


def _fused_with_other_scalars(cell: Cell, pattern, group: list[Case]) -> None:
    """The search function on each case's first call with its scalars varied, traced as a
    model writing them in is (:func:`_model`), and npugraph_ex's pass applied to it (the
    same patterns as TorchAir's): fused once per case, and equal to the search function
    run eagerly: the pattern matches the model's own eps and hands it to the op. Without
    a compile (the compiled path is the declared scalars'), and traced and passed once per
    process for tensors like these (:func:`opsdk.harness.pattern_pass.once`); the fused
    graph then runs on the cases' own tensors."""
    eager, scalars = [], []
    for case in group:
        tensors, declared = _split(cell, on_device(case.calls[0], "npu"))
        eager.append(tensors)
        scalars.append(_varied(declared, pattern.scalars))
    inputs = [t for tensors in eager for t in tensors.values()]

    def fuse():
        graph = pattern_pass.traced(_model(pattern, scalars), inputs, "npugraph_ex")
        return pattern_pass.apply(graph, "npugraph_ex")

    what = f"npugraph_ex, scalars {' and '.join(map(str, scalars))}"
    key = ("scalars", pattern.search, tuple(tuple(given.items()) for given in scalars))
    try:
        run = pattern_pass.once(key, inputs, fuse)
    except Exception as err:  # noqa: BLE001 - classified into a layer below
        raise _failure(err, "npugraph_ex") from err
    _require_fired(cell, pattern, cell.op.overload(), run, what, len(group))
    actual = run.after(*inputs)
    for case, tensors, given, got in zip(group, eager, scalars, actual, strict=True):
        expected = pattern.search(**tensors, **given)
        said = f"npugraph_ex, scalars {given}: the search function's fused graph"
        _require_same(got, expected, case, said)


def _require_same(actual, expected, case: Case, what: str) -> None:
    assert_same(
        actual,
        expected,
        what=what,
        layer="pattern-results",
        hint="the fused op computes something else than the search function it "
        "replaces (a cast or an order of operations the op does not do, an output "
        "mapped to another): make the two compute the same",
        tolerances=case.tolerances,
    )


def _failure(err: Exception, name: str) -> CellFailure:
    """The layer of an error compiling the search function through backend ``name``."""
    baked = pattern_pass.baked_scalar(err)
    if baked is not None:
        return CellFailure("pattern-not-fired", f"{name}: the fusion pass failed: {baked}")
    return as_failure(err, default_layer="pattern-results", compile_layer=_COMPILE_LAYER[name])


def _varied(scalars: dict, keywords) -> dict:
    """``scalars`` with each float the pattern matches by name (an eps) one larger (a
    float's step in :mod:`opsdk.harness.variants.cases`): the pattern must fire again and
    hand the new value to the op. A small change would hide a replacement that passes its
    own eps (1e-6 for 1e-5 moves an RMSNorm by less than float32's tolerance)."""
    return {k: v + 1 if k in keywords and isinstance(v, float) else v for k, v in scalars.items()}


def _split(cell: Cell, call) -> tuple[dict, dict]:
    """The call's arguments in the op's order: tensors, and the others."""
    given = _ordered(cell, call)
    tensors: dict[str, object] = {}
    scalars: dict[str, object] = {}
    for arg, value in zip(cell.op.spec.args, given, strict=True):
        (tensors if arg.is_tensor else scalars)[arg.name] = value
    return tensors, scalars


def _model(pattern, scalars: list[dict]):
    """A model calling the search function once per entry of ``scalars``, each on its own
    tensors, with those scalars written in as literals, as a model writes them
    (``rms_norm(x, w, 1e-6)``); it returns the calls' results, in order. Under
    dynamic=True Dynamo makes a float it reads from a variable a graph input, a tensor no
    float argument of an op takes (the pattern then leaves it alone:
    :mod:`opsdk._runtime.patterns`)."""
    params, calls = [], []
    for i, given in enumerate(scalars):
        names = [n for n in inspect.signature(pattern.search).parameters if n not in given]
        params += [f"{n}_{i}" for n in names]
        keywords = [f"{k}={v!r}" for k, v in given.items()]
        calls.append(f"search({', '.join([*(f'{n}_{i}' for n in names), *keywords])})")
    source = f"def model({', '.join(params)}):\n    return ({', '.join(calls)},)\n"
    namespace = {"search": pattern.search, "torch": torch}
    exec(compile(source, f"<fusion model of {pattern.owner}>", "exec"), namespace)  # noqa: S102
    return namespace["model"]


def _compiled(pattern, backend, shapes: str, name: str, scalars: list[dict]):
    """:func:`_model` compiled by ``backend``."""
    return compile_call(_model(pattern, scalars), backend, shapes, name=f"fusion_{name}")


def _require_fired(cell: Cell, pattern, op, run, name: str, times: int = 1) -> None:
    """The pass ``run`` fused the op ``times`` times (once per search function call)."""
    count = pattern_pass.fused(run, op)
    if count == times:
        return
    if count > times:
        raise CellFailure(
            "pattern-not-fired",
            f"{name}: the pattern fired {count} times on {times} search function call(s): it "
            "matches less than the search function computes",
        )
    raise CellFailure(
        "pattern-not-fired",
        f"{name} ({cell.shapes} shapes): the pattern of {cell.op.name} did not fire on the "
        f"search function's own graph: {pattern_pass.why_not(pattern, run)}",
    )


def _require_ge_node(cell: Cell, graphs: list, times: int) -> None:
    types = {ir.op_type for ir in irdef.for_op(cell.op.spec.qualname)}
    nodes = [n for g in graphs for n in g.op if n.type in types]
    if types and len(nodes) < times:
        raise CellFailure(
            "pattern-not-fired",
            f"ge: the FX graph was fused but no GE graph holds a {' or '.join(sorted(types))} "
            "node: check the op's converter",
        )


def _spares_a_near_miss(cell: Cell, pattern, case: Case) -> None:
    """The search function with one literal changed must stay unfused by npugraph_ex's
    pass (the same patterns as TorchAir's, traced alike); once per process for inputs like
    the case's (:func:`opsdk.harness.pattern_pass.once`)."""
    inputs = _ordered(cell, on_device(case.calls[0], "npu"))

    def near_miss():
        made = pattern_pass.near_miss(pattern, inputs, "npugraph_ex")
        if made is None:
            return None  # no literal to change: the search function is all the op's arguments
        graph, what = made
        return pattern_pass.apply(graph, "npugraph_ex"), what

    try:
        passed = pattern_pass.once(("near miss", pattern.search), inputs, near_miss)
    except Exception as err:  # noqa: BLE001 - classified into a layer (a baked scalar)
        raise _failure(err, "npugraph_ex") from err
    if passed is not None and pattern_pass.fused(passed[0], cell.op.overload()):
        raise CellFailure(
            "pattern-near-miss",
            f"the pattern of {cell.op.name} fired on a near miss, the search function with "
            f"{passed[1]}: a computation the op does not do; the registration matches too "
            "loosely (a search_fn_pattern traced with literals ignored, an extra check too "
            "lenient)",
        )


def _ordered(cell: Cell, call) -> list:
    """The call's arguments in the op's order, defaults filled in: the search function's."""
    given = cell.op.spec.by_name(call.args, call.kwargs)
    return [given.get(a.name, a.default) for a in cell.op.spec.args]


def environment() -> dict:
    """Which patterns the fusion pass applies here, and why (npugraph_ex's record of it)."""
    return {k: v for k, v in npugraph_backend.environment().items() if k == "fusion_patterns"}
