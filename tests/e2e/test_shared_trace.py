"""The compiled columns of a run share each case's trace, and sharing never changes a result.

A run with aot_eager, ge and npugraph_ex traces each case once (Dynamo and AOT
Autograd) and lowers it to each backend; every cell must come out exactly as it
does when its column runs alone, broken ops included.
"""

import pytest
import torch
from scaffolded import edit, implemented
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.utils import counters
from torch._functorch import aot_autograd as aot
from torch._functorch._aot_autograd.utils import make_boxed_func

from opsdk import harness
from opsdk.harness import columns
from opsdk.harness.core import shared_trace
from opsdk.harness.run import target

SHAPES = ["static", "dynamic"]


@pytest.fixture
def traces(monkeypatch):
    """How many graphs Dynamo and AOT Autograd trace."""
    counts = {"aot": 0}
    capture = aot.aot_stage1_graph_capture

    def counted_capture(*args, **kwargs):
        counts["aot"] += 1
        return capture(*args, **kwargs)

    monkeypatch.setattr(aot, "aot_stage1_graph_capture", counted_capture)
    counters.clear()
    return lambda: {**counts, "dynamo": counters["stats"]["unique_graphs"]}


def test_a_run_traces_each_case_once_for_all_compiled_columns(scaffolds, traces):
    project = scaffolds.shared("shared_add", namespace="shared_add")
    package = target.load(str(project))
    alone = harness.run_matrix(harness.cells(package, ["aot_eager"], SHAPES))
    one_column = traces()
    shared = harness.run_matrix(harness.cells(package, columns.compiling(), SHAPES))
    three_columns = {k: v - one_column[k] for k, v in traces().items()}
    assert all(r.status == "pass" for r in alone + shared), [r.describe() for r in shared]
    assert one_column["aot"] > 0 and one_column["dynamo"] > 0
    assert three_columns == one_column, "three columns traced more than aot_eager alone"


BREAKAGES = {
    "healthy": None,
    "converter-inputs-swapped": (
        "converter.py",
        'inputs={"x": x, "y": y}',
        'inputs={"x": y, "y": x}',
    ),
    "converter-attr-mistyped": ("converter.py", "attr.Float(alpha)", "attr.Int(alpha)"),
    "kernel-syncs-with-host": ("kernels.py", "return x + alpha * y", "return x * y.max().item()"),
    "undeclared-input-write": (
        "kernels.py",
        "return x + alpha * y",
        "x.add_(y)\n    return y.clone()",
    ),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_sharing_gives_each_cell_the_result_of_its_column_alone(scaffolds, tmp_path, breakage):
    name = f"sh_axpy{list(BREAKAGES).index(breakage)}"  # tests share a process: own modules
    axpy = implemented(
        scaffolds,
        tmp_path,
        name,
        f"{name}(Tensor x, Tensor y, float alpha) -> Tensor",
        "return x + alpha * y",
    )
    if BREAKAGES[breakage]:
        file, old, new_text = BREAKAGES[breakage]
        edit(axpy / name / file, old, new_text)
    package = target.load(str(axpy))
    cells = harness.cells(package, columns.compiling(), SHAPES)
    alone = [harness.run_cell(cell) for cell in cells]
    shared = harness.run_matrix(cells)
    outcome = lambda r: (r.column, r.shapes, r.status, r.layer, r.message)  # noqa: E731
    assert [outcome(r) for r in shared] == [outcome(r) for r in alone]
    failed = {r.column for r in alone if r.status != "pass"}
    assert (
        failed
        == {
            "healthy": set(),
            "converter-inputs-swapped": {"ge"},
            "converter-attr-mistyped": {"ge"},
            "kernel-syncs-with-host": {"npugraph_ex"},
            "undeclared-input-write": {"ge", "npugraph_ex"},  # the write never leaves the graph
        }[breakage]
    ), [r.describe() for r in alone]


class _Recorder:
    """AOT backends whose compilers note the graph each receives, per column."""

    def __init__(self):
        self.graphs: dict[str, list[str]] = {}

    def backend(self, column, **aot_settings):
        def compile_graph(gm, example_inputs):
            self.graphs.setdefault(column, []).append(gm.code)
            return make_boxed_func(gm.forward)

        return aot_autograd(fw_compiler=compile_graph, **aot_settings)


def _fan_out(backends: dict):
    fan_out = shared_trace.fan_out(backends)
    return torch.compile(lambda x, y: x * y, backend=fan_out, fullgraph=True)


def _mul_as_div(x, y):
    return x / (1 / y)


@pytest.mark.parametrize("applies", [False, True])
def test_a_decomposition_that_shapes_the_graph_makes_each_backend_trace_alone(traces, applies):
    recorder = _Recorder()
    op = torch.ops.aten.mul.Tensor if applies else torch.ops.aten.sub.Tensor
    fn = _fan_out(
        {
            "aot_eager": recorder.backend("aot_eager"),
            "ge": recorder.backend("ge", decompositions={op: _mul_as_div}),
        },
    )
    x, y = torch.randn(3), torch.randn(3)
    for column in ("aot_eager", "ge"):
        with shared_trace.running(column):
            torch.testing.assert_close(fn(x, y), x * y)
    assert traces()["aot"] == (3 if applies else 1)  # shared, then once per backend
    assert "mul" in recorder.graphs["aot_eager"][-1]
    assert ("div" in recorder.graphs["ge"][-1]) == applies


def test_a_backend_that_rewrites_dynamos_graph_shares_nothing():
    def rewriting_backend(gm, example_inputs):
        for node in gm.graph.nodes:
            if node.op == "call_function":
                node.target = torch.sub
        gm.recompile()
        return gm.forward

    backends = {"aot_eager": _Recorder().backend("aot_eager"), "ge": rewriting_backend}
    fn = _fan_out(backends)
    with shared_trace.running("aot_eager"), pytest.raises(shared_trace.NotShared, match="rewrote"):
        fn(torch.randn(3), torch.randn(3))
