"""The ge column's rules for a GE graph's inputs, per shape mode, each one shown to bite.

The op ``seed_pick`` reads rows of a growing cache at a one-token index and adds a SymInt:
the decode step of a KV cache. Its GE graphs, compiled once per shape mode through
the real TorchAir, pass every rule: in ``dynamic`` the cache keeps ``-1`` dims while
the ``[1]`` index stays concrete (Dynamo specializes size 1), and ``n`` is an int64
host input of shape ``[]`` (``dynamic`` and ``mark_static``) or a constant
(``static``). Each test breaks one rule in a copy of a genuine graph, or compiles a
converter that breaks it, and sees the cell fail in layer ``ge-graph``, with the node
the rule concerns marked for the cell's pictures (one of them shown in Chromium).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
import torch
from browser import browser, colors

from opsdk import harness, meta
from opsdk._runtime.device import ensure_npu
from opsdk.converters import int64_input
from opsdk.harness.cell import CellFailure, Result
from opsdk.harness.columns import ge
from opsdk.harness.core.ge_backend import recorded_graphs
from opsdk.harness.graph_hook import CellGraphs
from opsdk.harness.torchair_graphs import op_arguments
from opsdk.harness.variants.cases import cases
from opsdk.inputs import F32, I64, Fixed, Support, declare_supported
from opsdk.irdef import Input, IrDef, Output, register
from opsdk.report import html as html_report
from opsdk.report.graphs.ge import COLORS
from opsdk.report.graphs.pictures import Pictures

NS = "opsdk_seed_rules"
SHAPES = ("static", "dynamic", "mark_static")
ensure_npu()
_lib = torch.library.Library(NS, "DEF")


def _define(name: str, op_type: str, n):
    _lib.define(f"{name}(Tensor cache, Tensor index, SymInt n) -> Tensor")
    _lib.impl(name, lambda c, i, n: (c.index_select(0, i) + n).contiguous(), "PrivateUse1")
    _lib.impl(name, lambda c, i, n: c.index_select(0, i) + n, "CPU")
    torch.library.register_fake(
        f"{NS}::{name}", lambda c, i, n: meta.index_select(c, 0, i), lib=_lib
    )
    op = getattr(torch.ops.opsdk_seed_rules, name).default
    declare_supported(op, [Support(F32(8, 4), I64(1, value_range=(0, 8)), n)], non_contiguous=False)
    inputs = [Input("cache"), Input("index"), Input("n")]
    register(IrDef(op_type, inputs=inputs, outputs=[Output("y")], torch_op=op.name()))
    return op


PICK = _define("seed_pick", "SeedPick", 3)
# Its converter bakes n in; n never changes, so only the graph can show it.
BAKED = _define("seed_baked", "SeedBaked", Fixed(3))


@pytest.fixture(scope="module")
def converters():
    torchair = ge.torchair_with_converters()

    @torchair.register_fx_node_ge_converter(PICK)
    def _pick(cache, index, n, meta_outputs=None):
        inputs = {"cache": cache, "index": index, "n": int64_input(n)}
        return torchair.ge.custom_op("SeedPick", inputs=inputs, outputs=["y"])

    @torchair.register_fx_node_ge_converter(BAKED)
    def _baked(cache, index, n, meta_outputs=None):
        inputs = {"cache": cache, "index": index, "n": int64_input(3)}
        return torchair.ge.custom_op("SeedBaked", inputs=inputs, outputs=["y"])


def _cell(op, shapes):
    package = SimpleNamespace(__name__="seedpkg", __file__=__file__, OPS=(op,))
    [cell] = harness.cells(package, ["ge"], [shapes])
    return cell


@pytest.fixture(scope="module")
def graphs(converters):
    """shape mode -> (cell, the GE graph TorchAir compiled, the case it ran)."""
    compiled = {}
    for shapes in SHAPES:
        cell = _cell(PICK, shapes)
        with recorded_graphs() as recorded:
            result = harness.run_cell(cell)
        assert result.status == "pass", result.describe()
        [case] = cases(cell.op.spec, shapes, "ge")
        [concrete] = recorded.forward()
        compiled[shapes] = (cell, concrete, case)
    return compiled


def _data(graph, device, rank):
    [data] = [
        op
        for op in graph.op
        if op.type == "Data"
        and op.output_desc[0].device_type == device
        and len(op.output_desc[0].shape.dim) == rank
    ]
    return data


def _edited(graphs, shapes, edit=None):
    """A copy of the ``shapes`` graph's GraphDef changed by ``edit(graph)``."""
    from torchair._ge_concrete_graph.ge_ir_pb2 import GraphDef

    proto = GraphDef()
    proto.CopyFrom(graphs[shapes][1].graph._proto)
    if edit is not None:
        edit(proto)
    return proto


def _check(graphs, shapes, edit=None, *, as_shapes=None):
    """check_inputs on a copy of the ``shapes`` graph changed by ``edit(graph)``, judged
    as ``as_shapes`` (default: its own mode)."""
    _, concrete, case = graphs[shapes]
    proto = _edited(graphs, shapes, edit)
    graph = SimpleNamespace(op=proto.op, named_inputs_info=concrete.graph.named_inputs_info)
    copy = SimpleNamespace(graph=graph, fx_graph=concrete.fx_graph)
    ge.check_inputs(_cell(PICK, as_shapes or shapes), copy, case)


def _fails(match, *args, **kwargs) -> CellFailure:
    with pytest.raises(CellFailure, match=match) as failed:
        _check(*args, **kwargs)
    assert failed.value.layer == "ge-graph"
    return failed.value


def test_genuine_graphs_follow_the_rules_of_their_mode(graphs):
    static, dynamic, marked = (graphs[s][1].graph for s in SHAPES)
    assert list(_data(static, "NPU", 2).output_desc[0].shape.dim) == [8, 4]
    assert not [
        op for op in static.op if op.type == "Data" and op.output_desc[0].device_type == "CPU"
    ]
    assert list(_data(dynamic, "NPU", 2).output_desc[0].shape.dim) == [-1, -1]
    assert list(_data(marked, "NPU", 2).output_desc[0].shape.dim) == [8, 4]
    for graph in (dynamic, marked):
        assert list(_data(graph, "NPU", 1).output_desc[0].shape.dim) == [1]  # the index
        _data(graph, "CPU", 0)  # n
    for shapes in SHAPES:
        _check(graphs, shapes)


def test_static_takes_no_host_input(graphs):
    _fails("must bake Python scalars in", graphs, "mark_static", as_shapes="static")


def test_static_and_mark_static_dims_are_concrete(graphs):
    _fails("mark_static shapes must be concrete", graphs, "dynamic", as_shapes="mark_static")


def test_dynamic_keeps_minus_one_for_a_size_that_changes(graphs):
    def specialize(graph):
        _data(graph, "NPU", 2).output_desc[0].shape.dim[:] = [8, 4]

    _fails("a size was specialized", graphs, "dynamic", specialize)


def test_dynamic_exempts_an_input_whose_sizes_never_change(graphs):
    # The one-token index stays [1] (Dynamo specializes size 1); a [2] index would not.
    _check(graphs, "dynamic")

    def index_of_two(graph):
        _data(graph, "NPU", 1).output_desc[0].shape.dim[:] = [2]

    _fails("a size was specialized", graphs, "dynamic", index_of_two)


def _on_host(graph):
    _data(graph, "NPU", 2).output_desc[0].device_type = "CPU"


def test_npu_tensors_are_placed_on_npu(graphs):
    on_host = _on_host

    failure = _fails("npu tensors must be placed on NPU", graphs, "static", on_host)
    # The Data on the wrong side is what a picture of the graph marks.
    assert failure.marks == {
        _data(graphs["static"][1].graph, "NPU", 2).name: ("an npu tensor placed on CPU")
    }


@pytest.mark.parametrize("shapes", ["dynamic", "mark_static"])
def test_a_symbolic_scalar_is_an_int64_host_input_of_shape_nothing(graphs, shapes):
    from torchair._ge_concrete_graph.ge_ir_pb2 import DataType

    def on_npu(graph):
        _data(graph, "CPU", 0).output_desc[0].device_type = "NPU"

    def int32(graph):
        _data(graph, "CPU", 0).output_desc[0].dtype = DataType.Value("DT_INT32")

    _fails("a symbolic scalar is a host input, int64 of shape", graphs, shapes, on_npu)
    _fails("a symbolic scalar is a host input, int64 of shape", graphs, shapes, int32)


@pytest.mark.parametrize("shapes", ["dynamic", "mark_static"])
def test_a_symbolic_scalar_reaches_the_op_from_its_host_input(graphs, shapes):
    def cut(graph):
        n = _data(graph, "CPU", 0)
        [node] = [op for op in graph.op if op.type == "SeedPick"]
        node.input[:] = [i for i in node.input if not i.startswith(f"{n.name}:")]

    _fails(
        "argument n of .* is symbolic .* no host input carries it into the SeedPick",
        graphs,
        shapes,
        cut,
    )


@pytest.mark.parametrize("shapes", ["dynamic", "mark_static"])
def test_a_converter_that_bakes_a_symbolic_scalar_in_fails(converters, shapes):
    with recorded_graphs() as recorded, pytest.raises(CellFailure) as failed:
        ge.run(_cell(BAKED, shapes))
    assert failed.value.layer == "ge-graph", failed.value
    assert "opsdk.converters.int64_input(n)" in str(failed.value)
    # Marked in the pictures: the Const it baked into the SeedBaked node, and the FX
    # input whose Data TorchAir dropped.
    [concrete] = recorded.forward()
    const = next(op.name for op in concrete.graph.op if op.type == "Const")
    [call] = [n for n in concrete.fx_graph.graph.nodes if n.target == BAKED]
    symbol = call.args[2]  # n
    assert failed.value.__cause__.marks == {
        const: "n baked in: read it from a host input",
        symbol.name: f"symbolic n ({symbol.meta['val']}): no GE input carries it",
    }


def test_the_cells_picture_marks_the_data_on_the_wrong_side(graphs, tmp_path):
    """The report of that failure, in headless Chromium: the GE graph's picture has the
    Data placed on the host marked with the rule's note, and the op's node highlighted."""
    failure = _fails("npu tensors must be placed on NPU", graphs, "static", _on_host)
    cell, concrete, _ = graphs["static"]
    fx = concrete.fx_graph
    drawn = CellGraphs(
        op=cell.op.name,
        label=cell.label,
        column="ge",
        failed=True,
        fx=fx,
        ge=_edited(graphs, "static", _on_host),
        op_nodes=frozenset(
            n.name for n in fx.graph.nodes if op_arguments(n, cell.op.spec) is not None
        ),
        op_types=frozenset({"SeedPick"}),
        marks=failure.marks,
    )
    Pictures(tmp_path / "pictures")(drawn)
    result = Result(cell.op.name, "ge", "static", "fail", "ge-graph", str(failure))
    page = html_report.render([result], {}, pictures=tmp_path / "pictures")
    (tmp_path / "r.html").write_text(page.replace("<details", "<details open"))
    dom = browser(tmp_path, "--dump-dom", (tmp_path / "r.html").as_uri())
    assert dom.returncode == 0, dom.stderr
    _, ge_svg = re.findall(r"<svg.*?</svg>", dom.stdout, re.S)
    [marked] = re.findall(r'<g id="\w+" class="node marked">.*?</g>', ge_svg, re.S)
    name = _data(graphs["static"][1].graph, "NPU", 2).name  # the cache, moved to the host
    assert f'xlink:title="{name}"' in marked and "CPU (host)" in marked
    assert "✗ an npu tensor placed on CPU" in marked
    assert len(re.findall(r'<g id="\w+" class="node op">', ge_svg)) == 1
    shot = tmp_path / "shot.png"
    run = browser(
        tmp_path, f"--screenshot={shot}", "--window-size=1000,2000", (tmp_path / "r.html").as_uri()
    )
    assert run.returncode == 0, run.stderr
    wanted = {tuple(bytes.fromhex(COLORS[k][1:])) for k in ("op", "marked")}
    assert wanted <= colors(shot.read_bytes(), 2000)
