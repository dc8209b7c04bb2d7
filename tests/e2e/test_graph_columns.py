"""The `ge` and `npugraph_ex` columns end to end: broken ops are caught in their layer.

Each test scaffolds a package, breaks one thing the way users do, and runs
`opsdk check` in a fresh process, exactly as a user would.
"""

import re

import pytest
from scaffolded import edit, implemented

from opsdk.harness.cell import case_dir


@pytest.fixture
def axpy(scaffolds, tmp_path):
    """``x + alpha * y``: not commutative, and with an attr, so swaps and drops show."""
    return implemented(
        scaffolds,
        tmp_path,
        "my_axpy",
        "my_axpy(Tensor x, Tensor y, float alpha) -> Tensor",
        "return x + alpha * y",
    )


def test_implemented_op_passes_the_whole_matrix(axpy, opsdk_cli):
    run = opsdk_cli("check", axpy, json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["column"] for r in run.report["results"]} == {
        "eager",
        "opcheck",
        "aot_eager",
        "ge",
        "npugraph_ex",
    }
    assert all(r["status"] == "pass" for r in run.report["results"])
    env = run.report["environment"]
    assert env["torchair"].startswith("offline (torch_npu-2.13.0")
    assert env["ge_execution"] == "opsdk GE reference executor (offline)"
    assert env["npugraph_ex_runs_on"] == "opsdk capture stand-in"
    assert env["npugraph_ex_offline_options"] == {"pattern_fusion_pass": True}
    assert "torch_npu's built-in patterns are off" in env["fusion_patterns"]


def _ge_cell(opsdk_cli, pkg, shapes="static"):
    run = opsdk_cli("check", pkg, "--backend", "ge", "--shapes", shapes, json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    return run.report["results"][0]


@pytest.mark.parametrize(
    ("file", "old", "new_text", "layer", "needle"),
    [
        (
            "converter.py",
            'inputs={"x": x, "y": y}',
            'inputs={"x": y, "y": x}',
            "ge-exec",
            "values differ",
        ),
        ("converter.py", '"alpha": attr.Float(alpha),', "", "converter", "'alpha'"),
        ("converter.py", "attr.Float(alpha)", "attr.Int(alpha)", "converter", "TypeError"),
        (
            "ir.py",
            'Attr("alpha", "Float")',
            'Attr("alpha", "Int")',
            "converter",
            "declared Int (VT_INT) in the IR but set as 'f'; set it with attr.Int",
        ),
        (
            "ir.py",
            'inputs=[Input("x"), Input("y")]',
            'inputs=[Input("x")]',
            "converter",
            "['y'] are not in the IR definition",
        ),
        (
            "ir.py",
            "MY_AXPY_IR = register(",
            "MY_AXPY_IR = (",
            "converter",
            "no GE IR definition known to GE",
        ),
    ],
    ids=[
        "inputs-swapped",
        "attr-dropped",
        "attr-mistyped",
        "ir-attr-type",
        "ir-missing-input",
        "ir-not-registered",
    ],
)
def test_broken_converter_or_ir_is_caught_in_its_layer(
    axpy, opsdk_cli, file, old, new_text, layer, needle
):
    edit(axpy / "my_axpy" / file, old, new_text)
    cell = _ge_cell(opsdk_cli, axpy)
    assert (cell["status"], cell["layer"]) == ("fail", layer), cell
    assert needle in cell["message"], cell["message"]


def test_converter_that_bypasses_the_custom_op_fails_the_graph_check(axpy, opsdk_cli):
    # Numerically right, but the GE graph lacks the op: on an NPU the kernel never runs.
    edit(
        axpy / "my_axpy" / "converter.py",
        "    return ge.custom_op(",
        "    from torchair._ge_concrete_graph import ge_apis\n\n"
        "    return ge_apis.Add(x, ge_apis.Mul(y, ge.Const(alpha)))\n    ge.custom_op(",
    )
    cell = _ge_cell(opsdk_cli, axpy)
    assert (cell["status"], cell["layer"]) == ("fail", "ge-graph"), cell
    assert "expected a MyAxpy node" in cell["message"]


def test_inplace_converter_returning_the_mutated_input_fails_in_converter(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = scaffolds.copy(tmp_path, "my_iadd", inplace=True, namespace="g_iadd")
    edit(pkg / "my_iadd" / "converter.py", "    ge.custom_op(", "    return ge.custom_op(")
    cell = _ge_cell(opsdk_cli, pkg)
    assert (cell["status"], cell["layer"]) == ("fail", "converter"), cell
    assert "returned its mutated input" in cell["message"]


def test_dump_writes_fx_and_ge_graphs_with_the_custom_node(axpy, opsdk_cli, tmp_path):
    """The dynamic cell's graphs are dumped; the static cell's first file is /dev/full (the
    disk filled up mid-run): that cell is ``setup``, naming the file, while the same op
    passes its other cell."""
    dump = tmp_path / "dump"
    full = dump / case_dir("g_my_axpy::my_axpy", "ge-static") / "graph0_fx.py"
    full.parent.mkdir(parents=True)
    full.symlink_to("/dev/full")
    run = opsdk_cli("check", axpy, "--backend", "ge", "--dump", dump, json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    cells = {r["shapes"]: r for r in run.report["results"]}
    assert (cells["static"]["status"], cells["static"]["layer"]) == ("error", "setup")
    assert cells["static"]["message"] == (
        f"--dump cannot write {full} (No space left on device); free space or drop --dump"
    )
    assert cells["dynamic"]["status"] == "pass", cells["dynamic"]
    [case] = list(dump.glob("*/ge-dynamic"))
    ge_py = (case / "graph0_ge.py").read_text()
    assert re.search(r"MyAxpy_0 = MyAxpy\(x=\w+, y=\w+, alpha=0\.5\)", ge_py), ge_py
    assert "Data(index=0)  # float32[-1, -1]@NPU" in ge_py
    assert "my_axpy.default" in (case / "graph0_fx.py").read_text()
    assert 'type: "MyAxpy"' in (case / "graph0_ge.pbtxt").read_text()


def _npugraph_cell(opsdk_cli, pkg):
    run = opsdk_cli(
        "check", pkg, "--backend", "npugraph_ex", "--shapes", "static", json_report=True
    )
    assert run.code == 1, run.stdout + run.stderr
    return run.report["results"][0]


def test_kernel_syncing_with_the_host_fails_in_capture(scaffolds, tmp_path, opsdk_cli):
    pkg = implemented(
        scaffolds,
        tmp_path,
        "my_scale",
        "my_scale(Tensor x, Tensor s) -> Tensor",
        "return x * s.max().item()",
    )
    cell = _npugraph_cell(opsdk_cli, pkg)
    assert (cell["status"], cell["layer"]) == ("fail", "capture"), cell
    assert "item" in cell["message"] and "stream is capturing" in cell["message"]


def test_kernel_with_a_data_dependent_shape_fails_in_capture(scaffolds, tmp_path, opsdk_cli):
    pkg = implemented(
        scaffolds,
        tmp_path,
        "my_pick",
        "my_pick(Tensor x, Tensor s) -> Tensor",
        "return x[s > 0]",
        fake="x.new_empty(torch.library.get_ctx().new_dynamic_size())",
    )
    cell = _npugraph_cell(opsdk_cli, pkg)
    assert (cell["status"], cell["layer"]) == ("fail", "capture"), cell


def test_undeclared_input_write_is_lost_on_replay(scaffolds, tmp_path, opsdk_cli):
    # The schema does not mark x as written: eager and aot_eager look right, but the
    # write lands in npugraph_ex's copy of the input and never reaches the caller.
    pkg = implemented(
        scaffolds,
        tmp_path,
        "my_acc",
        "my_acc(Tensor x, Tensor s) -> Tensor",
        "x.add_(s)\n    return s.clone()",
        fake="meta.same_as(s)",
    )
    cell = _npugraph_cell(opsdk_cli, pkg)
    assert (cell["status"], cell["layer"]) == ("fail", "replay"), cell
    assert "force_eager fixes it" in cell["message"]
