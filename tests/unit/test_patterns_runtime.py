"""opsdk._runtime.patterns: one registration per op and process, traced at every dtype of the
op's cases with its floats matched by name, with each backend once it is there; a second op
with the same pattern is held back with the reason. And opsdk.harness.pattern_pass: where a
graph the pass left unfused parts from the pattern, and the near miss it makes."""

import sys
import types

import pytest
import torch

from opsdk import F16, F32, Support, declare_supported
from opsdk._runtime import patterns
from opsdk.harness import pattern_pass

LIB = torch.library.Library("opsdk_unit_patterns", "DEF")
for name in ("add_scale", "add_scale_twin", "add_scale_other", "add_scale_typed"):
    LIB.define(f"{name}(Tensor x, Tensor y, float alpha=1.0) -> Tensor")
OPS = torch.ops.opsdk_unit_patterns


def search(x, y, alpha):
    return (x + y) * alpha


def other_search(x, y, alpha):
    return (x - y) * alpha


def replace(x, y, alpha):
    return OPS.add_scale(x, y, alpha)


@pytest.fixture
def backend(monkeypatch):
    """A fresh registry, and a backend package recording its register_replacement calls."""
    for name, value in (("_patterns", {}), ("_by_repr", {}), ("_backends", {}), ("_tracers", {})):
        monkeypatch.setattr(patterns, name, value)
    monkeypatch.setattr(patterns, "_applied", {"fake_backend": set()})
    calls = []
    package = types.ModuleType("fake_backend")
    package.register_replacement = lambda **kwargs: calls.append(kwargs)
    utils = types.ModuleType("fake_backend._utils")
    utils.get_npu_default_decompositions = dict
    monkeypatch.setitem(sys.modules, "fake_backend", package)
    monkeypatch.setitem(sys.modules, "fake_backend._utils", utils)
    return package, calls


def test_a_pattern_waits_for_its_backend_and_registers_once_per_dtype(backend):
    package, calls = backend
    declare_supported(
        OPS.add_scale_typed.default,
        [
            Support(F32(2, 3), F32(2, 3)),
            Support(F16(2, 3), F16(2, 3)),
            Support(F32(0, 3), F32(0, 3)),
        ],
    )
    first = patterns.register(OPS.add_scale_typed.default, search, replace)
    assert calls == []  # no backend yet: tracing waits (importing the matcher costs seconds)
    patterns.connect("fake_backend", package)
    # again, as a package imported a second time does
    assert patterns.register(OPS.add_scale_typed.default, search, replace) is first
    patterns.connect("fake_backend", package)
    dtypes = [[t.dtype for t in c["example_inputs"]] for c in calls]
    assert dtypes == [[torch.float32] * 2, [torch.float16] * 2]  # the empty case left out
    assert all(
        c["scalar_workaround"] == {"alpha": patterns.sentinels(["alpha"])["alpha"]} for c in calls
    )
    assert all(c["skip_duplicates"] for c in calls)
    assert {c["trace_fn"] for c in calls} == {patterns.trace_fn("fake_backend")}
    assert first.problem is None


def test_the_same_pattern_for_a_second_op_is_held_back_with_the_reason(backend):
    package, calls = backend
    patterns.connect("fake_backend", package)
    patterns.register(OPS.add_scale.default, search, replace)
    twin = patterns.register(OPS.add_scale_twin.default, search, replace)
    other = patterns.register(OPS.add_scale_other.default, other_search, replace)
    assert (
        "duplicate registration" in twin.problem
        and "opsdk_unit_patterns::add_scale " in twin.problem
    )
    assert other.problem is None
    assert [c["search_fn"] for c in calls] == [search, other_search]


def test_a_scalar_that_arrives_as_a_tensor_is_not_matched(backend):
    package, calls = backend
    patterns.connect("fake_backend", package)
    patterns.register(OPS.add_scale.default, search, replace)
    check = calls[0]["extra_check"]
    graph = torch.fx.Graph()
    node = graph.placeholder("alpha")
    assert check(types.SimpleNamespace(kwargs={"alpha": 0.5}))
    assert not check(types.SimpleNamespace(kwargs={"alpha": node}))


def test_a_search_function_must_take_the_ops_arguments(backend):
    with pytest.raises(TypeError, match=r"takes \['x', 'y'\]: give it the op's arguments"):
        patterns.register(OPS.add_scale.default, lambda x, y: x + y, replace)


def _run(fn, *inputs) -> pattern_pass.PassRun:
    """A pass run that left ``fn``'s graph (traced with fake ``inputs``) as it was."""
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(fn, tracing_mode="fake")(*inputs)
    return pattern_pass.PassRun("fake_backend", graph, graph)


@pytest.mark.parametrize(
    ("model", "dtype", "scalars", "why"),
    [
        (
            lambda x, y: (x + y) * 0.5,
            torch.float16,
            None,
            "traced at float32, the graph computes in float16",
        ),
        (
            lambda x, y: (x + y).double() * 0.5,
            torch.float32,
            None,
            "a cast the pattern lacks, at node _to_copy",
        ),
        (
            lambda x, y: (x + y) * 2.0,
            torch.float32,
            (),
            "a scalar baked into the pattern: node mul",
        ),
        (
            lambda x, y: (x + y) * 2.0,
            torch.float32,
            None,
            "an extra check of the registration refused",
        ),
    ],
)
def test_why_a_pattern_did_not_fire_names_the_node(backend, model, dtype, scalars, why):
    package, _ = backend
    patterns.connect("fake_backend", package)
    pattern = patterns.register(OPS.add_scale_other.default, search, replace, scalars=scalars)
    x = torch.randn(2, 3, dtype=dtype)
    assert why in pattern_pass.why_not(pattern, _run(model, x, x))


def test_a_near_miss_changes_one_literal_of_the_search_function(backend):
    def squares(x, y, alpha):
        return (x + y).pow(2) * alpha

    pattern = patterns.register(OPS.add_scale_other.default, squares, replace)
    x = torch.randn(2, 3)
    graph, what = pattern_pass.near_miss(pattern, [x, x, 0.5], "fake_backend")
    assert what.endswith("(pow.Tensor_Scalar) with 5 for 2"), what
    assert torch.equal(graph(x, x, 0.5), (x + x).pow(5) * patterns.sentinels(["alpha"])["alpha"])
    assert (
        pattern_pass.near_miss(
            patterns.register(OPS.add_scale.default, search, replace), [x, x, 0.5], "fake_backend"
        )
        is None
    )  # nothing but the op's own arguments: no literal to change


def test_what_a_pass_does_is_worked_out_once_per_inputs_and_registrations(backend, monkeypatch):
    """pattern_pass.once: again for other dtypes, sizes, strides or values, or once the
    backend holds another op's pattern; never again for the same (a later cell's)."""
    monkeypatch.setattr(pattern_pass, "_once", {})
    package, _ = backend
    patterns.connect("fake_backend", package)
    done = []

    def work():
        done.append(True)
        return len(done)

    x = torch.randn(2, 3)
    assert pattern_pass.once(("w",), [x, 0.5], work) == 1
    assert pattern_pass.once(("w",), [torch.randn(2, 3), 0.5], work) == 1  # alike
    assert pattern_pass.once(("w",), [x.half(), 0.5], work) == 2  # another dtype
    assert pattern_pass.once(("w",), [torch.randn(3, 2).t(), 0.5], work) == 3  # strides
    assert pattern_pass.once(("w",), [x, 0.25], work) == 4  # another value
    assert pattern_pass.once(("v",), [x, 0.5], work) == 5  # asked for something else
    patterns.register(OPS.add_scale.default, search, replace)  # the backend takes it
    assert pattern_pass.once(("w",), [x, 0.5], work) == 6
    assert pattern_pass.once(("w",), [x, 0.5], work) == 6
