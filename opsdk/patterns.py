"""Public: fusion patterns, a fused op swapped into a model's graphs (``register_replacement``).

An op package's patterns.py calls :func:`register` (``opsdk new --pattern`` writes it);
a team's model test asks :func:`fires` whether its model's graph gets the fused op under
npugraph_ex (offline too: the fusion pass then runs the packages' own patterns only)::

    assert opsdk.patterns.fires(model, x, residual, op=my_ops.OPS[0]) == 2  # two layers

:func:`fuses` asks both graph backends at once (the pytest plugin's ``opsdk_fuses``
fixture). Importing this module is light; :func:`fires` brings up npugraph_ex when called.
"""

from __future__ import annotations

from opsdk._runtime import spec
from opsdk._runtime.patterns import register

__all__ = ["BACKENDS", "fires", "fuses", "register"]

# The graph backends a model meets a pattern in: capture-and-replay, and GE graph mode.
BACKENDS = ("npugraph_ex", "ge")


def fires(fn, *inputs, op, backend: str = "npugraph_ex", dynamic: bool = False) -> int:
    """How many times ``op``'s pattern fired when ``fn(*inputs)`` is compiled by ``backend``
    (``npugraph_ex`` or ``ge``); raises AssertionError, with the graph the pass was handed,
    when it did not fire, and with the problem when the pattern is not registered."""
    import torch
    import torch._dynamo

    from opsdk._runtime import patterns
    from opsdk._runtime.spec import of
    from opsdk.harness import pattern_pass
    from opsdk.harness.core import ge_backend, npugraph_backend

    compiler = ge_backend.backend() if backend == "ge" else npugraph_backend.backend()
    pattern = patterns.registered(of(op).qualname)
    if pattern is None:
        raise AssertionError(f"{of(op).qualname} registers no fusion pattern")
    if pattern.failure is not None or pattern.problem is not None:
        raise AssertionError(str(pattern.failure or pattern.problem))
    torch._dynamo.reset()
    with pattern_pass.observed() as runs:
        try:
            torch.compile(fn, backend=compiler, fullgraph=True, dynamic=dynamic)(*inputs)
        except Exception as err:  # noqa: BLE001 - told as the pattern's when it is
            baked = pattern_pass.baked_scalar(err)
            if baked is None:
                raise
            why = f"the pattern of {pattern.owner} stops the model's compile: {baked}"
            raise AssertionError(why) from None
    count = sum(pattern_pass.fused(r, op) for r in runs)
    if not runs:
        raise AssertionError(f"{backend} ran no fusion pass: turn pattern_fusion_pass on")
    if not count:
        why, graph = pattern_pass.why_not(pattern, runs[-1]), runs[-1].before.graph
        raise AssertionError(
            f"the pattern of {pattern.owner} did not fire: {why}; the graph:\n{graph}"
        )
    return count


def fuses(
    fn, *inputs, op, times: int | None = None, backends=BACKENDS, dynamic: bool = False
) -> dict[str, int]:
    """How many times ``op``'s pattern fired in ``fn``'s graph under each of ``backends``
    (:func:`fires`); raises AssertionError, naming the backend, when it did not fire there
    or fired other than ``times`` times (one fusion per layer of a model, say)."""
    counts = {}
    for backend in backends:
        try:
            counts[backend] = fires(fn, *inputs, op=op, backend=backend, dynamic=dynamic)
        except AssertionError as err:
            raise AssertionError(f"{backend}: {err}") from None
        if times is not None and counts[backend] != times:
            raise AssertionError(
                f"{backend}: the pattern of {spec.of(op).qualname} fired {counts[backend]} "
                f"times in the model's graph, not {times}: a part of the model the pattern "
                "should match is written differently (a cast, a view, an operand order)"
            )
    return counts
