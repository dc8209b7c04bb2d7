"""opsdk._runtime.patterns: one registration per op and process, traced at every dtype of the
op's cases with its floats matched by name, with each backend once it is there; a second op
with the same pattern is held back with the reason."""

import sys
import types

import pytest
import torch

from opsdk import F16, F32, Support, declare_supported
from opsdk._runtime import patterns

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
