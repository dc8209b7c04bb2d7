"""Pictures of a cell's graphs, in process.

The GE drawing is checked on decoded ``ModelDef``s that TorchAir's own graph builders
made (``Data``, ``Const``, ``TensorMove``, ``ge.custom_op``, ``NetOutput``), one per
shape a cell meets: an in-place op behind a ``TensorMove``, a dynamic graph with
``-1`` dims and a symbolic scalar on the host, Consts, an op with two outputs, and a
node a failed rule marks. The FX drawing is torch's ``FxGraphDrawer`` on a traced
graph; the hook hands a cell's graphs over as the run goes; the Markdown matrix fits
a CI summary. Real cells' pictures, in a browser: tests/e2e/test_reports.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from ge_pictures import SHIFT, inplace_graph
from torch.fx.experimental.proxy_tensor import make_fx

from opsdk._runtime import patches, spec
from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns, graph_hook
from opsdk.harness.cell import Cell, CellFailure, OpUnderTest, Result
from opsdk.harness.variants import contexts
from opsdk.report import html, markdown
from opsdk.report.graphs import fx, ge, pictures, render


def _text(label: str) -> str:
    """A node label's text: HTML tags dropped, whitespace collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", label).strip("<> ").split())


def _nodes(dot) -> dict[str, tuple[str, dict]]:
    """Each node of a pydot graph (its defaults aside): id -> (label text, attributes)."""
    return {
        n.get_name(): (_text(n.get("label")), n.get_attributes())
        for n in dot.get_nodes()
        if n.get("label")
    }


def _node(dot, starts: str) -> dict:
    """The attributes of the one node whose label text starts with ``starts``."""
    [attrs] = [attrs for text, attrs in _nodes(dot).values() if text.startswith(starts)]
    return attrs


def _edges(dot) -> dict[str, dict]:
    """``"Producer->Consumer"`` (the nodes' first label words) -> the edge's attributes."""
    first = {name: text.split()[0] for name, (text, _) in _nodes(dot).items()}
    return {
        f"{first[e.get_source()]}->{first[e.get_destination()]}": e.get_attributes()
        for e in dot.get_edges()
    }


def test_an_in_place_op_shows_its_tensormove_ref_edge_and_the_write_back(build):
    dot = ge.dot_of(build(inplace_graph("WriteX")), {"WriteX"})
    op = _node(dot, "WriteX")
    assert (op["class"], op["fillcolor"]) == ("op", ge.COLORS["op"])
    assert _node(dot, "TensorMove")["fillcolor"] == ge.COLORS["TensorMove"]
    edges = _edges(dot)
    assert edges["TensorMove->WriteX"]["label"] == "x (ref)"
    assert edges["TensorMove->WriteX"]["color"] == ge.COLORS["ref"]
    back = edges["NetOutput->Data"]
    assert back["label"] == "output 0: written back into a0" and back["style"] == "dashed"
    # An output named otherwise writes nothing in place: no ref, nothing written back.
    plain = _edges(ge.dot_of(build(inplace_graph("NotRef", "z")), {"NotRef"}))
    assert plain["TensorMove->NotRef"]["label"] == "x" and "NetOutput->Data" not in plain


def test_a_dynamic_graph_shows_minus_one_dims_placement_and_the_symbolic_scalar(build):
    def body(ge_, raw, Data, DataType):
        x = Data(index=0, dtype=DataType.DT_FLOAT, shape=[-1, 4], placement="NPU", node_name="a0")
        n = Data(index=1, dtype=DataType.DT_INT64, shape=[], placement="CPU", node_name="a1")
        raw.NetOutput([ge_.custom_op("Shift", inputs={"x": x, "n": n}, outputs=["y"])])

    dot = ge.dot_of(build(body), {"Shift"}, symbols={"a1": "s7"})
    texts = [text for text, _ in _nodes(dot).values()]
    assert "Data a0 index 0 float32 [-1, 4] NPU (device)" in texts
    assert "Data a1 index 1 int64 [] CPU (host) symbolic scalar s7" in texts
    assert _node(dot, "Data a0")["fillcolor"] == ge.COLORS["device"]
    assert _node(dot, "Data a1")["fillcolor"] == ge.COLORS["host"]
    assert _edges(dot)["Data->Shift"]["label"] in ("x", "n")


def test_consts_show_small_values_and_count_large_ones(build):
    def body(ge_, raw, Data, DataType):
        small = ge_.Const([1.0, 2.0, 3.0], dtype=DataType.DT_FLOAT, node_name="small")
        large = ge_.Const(list(range(20)), dtype=DataType.DT_INT32, node_name="large")
        raw.NetOutput([small, large])

    texts = [text for text, _ in _nodes(ge.dot_of(build(body))).values()]
    assert "Const small float32 [3] = [1.0, 2.0, 3.0]" in texts
    assert "Const large int32 [20]: 20 values" in texts


def test_two_outputs_label_each_edge_with_the_output_it_carries(build):
    def body(ge_, raw, Data, DataType):
        x = Data(index=0, dtype=DataType.DT_FLOAT, shape=[2], placement="NPU", node_name="a0")
        a, b = ge_.custom_op("TwoOut", inputs={"x": x}, outputs=["a", "b"])
        raw.NetOutput([a, b])

    labels = [e.get("label") for e in ge.dot_of(build(body), {"TwoOut"}).get_edges()]
    assert labels == ["x", "a → input0", "b → input1"]


def test_a_node_a_failed_rule_concerns_is_marked_with_its_note(build):
    note = "an npu tensor placed on CPU"
    dot = ge.dot_of(build(inplace_graph("WriteX")), {"WriteX"}, marks={"a1": note})
    marked = _node(dot, "Data a1")
    assert marked["class"] == "marked" and f"✗ {note}" in _text(marked["label"])
    assert (marked["fillcolor"], marked["color"]) == (
        ge.COLORS["marked"],
        ge.COLORS["marked_border"],
    )
    assert "class" not in _node(dot, "Data a0")


@pytest.fixture
def traced():
    """A post-AOT-like FX graph: ``x + n`` through a symbolic trace (``n`` a SymInt), its
    values in ``meta["val"]`` only."""
    graph = make_fx(lambda x, n: torch.ops.aten.add.Tensor(x, n), tracing_mode="symbolic")(
        torch.ones(2, 3), 4
    )
    for node in graph.graph.nodes:
        node.meta.pop("tensor_meta", None)
    return graph


def test_the_fx_picture_highlights_the_op_and_marks_a_symbolic_placeholder(traced):
    nodes = {n.name: n for n in traced.graph.nodes}
    [add] = [n for n in nodes.values() if n.op == "call_function"]
    [n_input] = [n for n in nodes.values() if n.op == "placeholder" and n.name != "x_1"]
    dot = fx.dot_of(traced, {add.name}, {n_input.name: "no GE input carries it"})
    drawn = {node.get_name(): node for node in dot.get_nodes()}
    assert drawn[add.name].get("class") == "op"
    assert drawn[add.name].get("fillcolor") == ge.COLORS["op"]
    label = drawn[n_input.name].get("label")
    assert "symbolic scalar s" in label and "✗ no GE input carries it" in label
    assert drawn[n_input.name].get("class") == "marked"
    assert "dtype=torch.float32" in drawn["x_1"].get("label")  # lent from meta["val"]
    assert not any("tensor_meta" in n.meta for n in traced.graph.nodes)  # and given back


# --- the hook: which graph a cell hands over -------------------------------------------


@pytest.fixture
def handed(monkeypatch, build):
    """``(see, received)``: what TorchAir would report seeing, and what a receiver got."""
    seeing = []

    @contextlib.contextmanager
    def seen(callback):
        seeing.append(callback)
        yield
        seeing.pop()

    monkeypatch.setattr(patches, "ge_graphs_seen", seen)
    received = []
    with graph_hook.received_by(received.append):
        yield (lambda graph: seeing[-1](graph)), received


def _concrete(build, fx_graph, name):
    """What a GeConcreteGraph offers the hook: its FX graph and GE graph."""
    graph = build(inplace_graph("WriteX"), name=name)
    model = SimpleNamespace(graph=[graph])
    return SimpleNamespace(
        fx_graph=fx_graph, graph=SimpleNamespace(model=model, op=graph.op, named_inputs_info={})
    )


CELL = Cell(OpUnderTest(spec.of(SHIFT), "pkg"), "ge", "dynamic")


def test_a_failing_case_hands_over_its_last_graph_with_the_failures_marks(handed, build, traced):
    see, received = handed
    first, shared, alone = (_concrete(build, traced, n) for n in ("first", "shared", "alone"))
    with pytest.raises(CellFailure, match="case 2: baked"), graph_hook.collected(CELL):
        see(first)
        graph_hook.case_done()
        see(shared)
        see(shared)  # seen again (compiled after it was saved): one graph
        see(alone)
        with graph_hook.paused():  # npugraph_ex's diagnosis ladder: reruns, not the cell's
            see(_concrete(build, traced, "ladder"))
        try:
            raise CellFailure("ge-graph", "baked", {"a1": "baked in"})
        except CellFailure as failure:  # as Case.named() wraps it
            raise CellFailure(failure.layer, f"case 2: {failure}") from failure
    [graphs] = received
    assert graphs.ge.name == "alone" and graphs.failed
    assert graphs.marks == {"a1": "baked in"} and graphs.op_types == {"Shift"}
    assert graphs.op_nodes == set()  # the traced graph calls aten.add, not the op


def test_a_pass_hands_over_the_last_forward_graph_of_its_first_case(handed, build, traced):
    see, received = handed
    with graph_hook.collected(CELL):
        see(_concrete(build, traced, "first"))
        # A training op's backward graph, compiled while autograd runs the backward.
        leaf = torch.ones(1, requires_grad=True)
        leaf.register_hook(lambda grad: see(_concrete(build, traced, "backward")))
        (leaf * 2).sum().backward()
        graph_hook.case_done()
        see(_concrete(build, traced, "second"))
        graph_hook.case_done()
    [graphs] = received
    assert graphs.ge.name == "first" and not graphs.failed


def test_a_receiver_that_fails_costs_a_warning_never_the_verdict(handed, build, traced):
    see, _ = handed

    def broken(graphs):
        raise OSError("disk full")

    with graph_hook.received_by(broken), warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        with pytest.raises(CellFailure, match="the op's own failure"), graph_hook.collected(CELL):
            see(_concrete(build, traced, "g"))
            raise CellFailure("ge-exec", "the op's own failure")
    assert ["disk full" in str(w.message) for w in heard] == [True]


def test_without_dot_each_graph_is_written_as_text_saying_why(monkeypatch, build, traced, tmp_path):
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    drawer = pictures.Pictures(tmp_path)
    concrete = _concrete(build, traced, "g")
    graphs = graph_hook.CellGraphs(
        op=CELL.op.name,
        label=CELL.label,
        column="ge",
        failed=True,
        fx=traced,
        ge=concrete.graph.model.graph[0],
        op_nodes=frozenset(),
        op_types=frozenset({"WriteX"}),
    )
    drawer(graphs)
    found = pictures.found(tmp_path, CELL.op.name, CELL.label)
    assert sorted(found) == ["fx", "ge"] and all(p.suffix == ".txt" for p in found.values())
    why, _, text = found["ge"].read_text().partition("\n")
    assert why == f"not drawn: {render.missing()}" and "WriteX(x=TensorMove_0" in text
    assert "def forward" in found["fx"].read_text()
    # The reports say so in one line and show the text instead.
    result = Result(CELL.op.name, "ge", "dynamic", "fail", "ge-exec", "values differ")
    page = html.render([result], {}, pictures=tmp_path)
    assert page.count("<figure><p>not drawn: Graphviz") == 2 and "<svg" not in page
    links = markdown.render([result], tmp_path, tmp_path).splitlines()[-1]
    assert links == (
        f"  Graphs: [FX graph (text)]({found['fx'].relative_to(tmp_path)}), "
        f"[GE graph (text)]({found['ge'].relative_to(tmp_path)})"
    )
    drawn = list(drawer.drawn)
    drawer(dataclasses.replace(graphs, failed=False))  # a pass: nothing drawn
    assert drawer.drawn == drawn and pictures.found(tmp_path, CELL.op.name, CELL.label) == found
    drawer.forget([(CELL.op.name, CELL.label)])
    assert pictures.found(tmp_path, CELL.op.name, CELL.label) == {}


def test_what_dot_wrote_before_it_failed_is_no_picture(monkeypatch, traced, tmp_path):
    def failing(dot, outputs):
        for path in outputs.values():
            path.write_text("<svg")
        raise render.RenderError("dot exited with code 1: out of memory")

    monkeypatch.setattr(render, "render", failing)
    graphs = graph_hook.CellGraphs(
        CELL.op.name, CELL.label, "ge", True, traced, None, frozenset(), frozenset()
    )
    pictures.Pictures(tmp_path)(graphs)
    found = pictures.found(tmp_path, CELL.op.name, CELL.label)
    assert {kind: path.name for kind, path in found.items()} == {"fx": "fx.txt"}
    assert found["fx"].read_text().startswith("not drawn: dot exited with code 1: out of memory")


def test_opsdk_graph_says_a_picture_the_disk_did_not_take(full_disk, traced, monkeypatch, capsys):
    """One line and exit 3, not "compiled no graph to draw" (exit 1) with the disk error
    left in a warning: the cell ran here (its graphs handed over as a run of it would)."""
    from opsdk import cli, harness

    def run_cell(cell):
        graph_hook.hand_over_pass(cell, SimpleNamespace(after=traced, before=None), None)
        return Result(cell.op.name, cell.column, cell.shapes, "pass")

    monkeypatch.setattr(harness, "run_cell", run_cell)
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    example = Path(__file__).resolve().parents[2] / "examples" / "custom_ops" / "my_add"
    argv = ["graph", str(example), "-k", "my_add", "--backend", "ge", "--shapes", "static"]
    with pytest.warns(UserWarning, match="No space left on device"):
        assert cli.main([*argv, "--out", str(full_disk / "drawn")]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"opsdk graph: error: --out {full_disk / 'drawn'}/")
    assert err.endswith(
        "fx.txt: not written (No space left on device); free some space or "
        "choose another location\n"
    )


# --- the Markdown matrix fits a CI summary ----------------------------------------------


def test_the_markdown_matrix_of_an_in_place_op_with_its_default_contexts_fits_12_columns():
    iadd = spec.parse("myops::my_iadd(Tensor(a!) x, Tensor y) -> ()")
    chosen = contexts.select(iadd, None)
    assert chosen  # an in-place op gets contexts by default
    results = [
        Result(iadd.qualname, backend, shapes, "pass", context=context)
        for backend in columns.names()
        if columns.column(backend).selects is None  # fusion: only ops with a pattern
        for context in (None, *(chosen if columns.column(backend).compiles else ()))
        for shapes in SHAPE_MODES
    ]
    results[-1] = Result(
        iadd.qualname, "npugraph_ex", "mark_static", "fail", "replay", "x", context=chosen[-1]
    )
    text = markdown.render(results)
    header = next(line for line in text.splitlines() if line.startswith("| op |"))
    assert header.count("|") - 1 <= 12, header
    rows = [line for line in text.splitlines() if line.startswith(f"| {iadd.qualname}")]
    assert len(rows) == 1 + len(chosen)  # the op alone, then one row per context
    assert rows[-1].endswith("| `✓✓✓` | `✓✓✗` `replay` |"), rows[-1]
    assert sum(row.count("✓") + row.count("✗") for row in rows) == len(results)
