"""The benchmarks still run (a smoke run: their numbers are not checked here)."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import audit_sweep  # noqa: E402
import device_cost  # noqa: E402
import harness_throughput  # noqa: E402
from _ops import generate_library  # noqa: E402


def test_host_overhead_measures_every_style_and_the_cpp_entry_on_cpu_and_npu():
    """In a process of its own: the op packages it imports from a temporary directory
    would outlive that directory here, and a later test that imports TorchAir would
    fail loading their converters."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "host_overhead.py"), "--number", "20"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    row = {k: float(v) for k, v in (line.rsplit(None, 1) for line in done.stdout.splitlines())}
    for name in ("custom_op", "library", "cpp", "cpp entry"):
        for device in ("cpu", "npu"):
            assert row[f"{name} {device} us"] > 0
            assert row[f"{name}/torch.add {device}"] > 0


@pytest.mark.slow
def test_the_graph_pictures_bench_compares_reports_with_and_without_pictures():
    """A process of its own, for the reason above."""
    argv = [sys.executable, str(BENCH / "graph_pictures.py"), "--ops", "1", "--rounds", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    row = dict(line.rsplit(None, 1) for line in done.stdout.splitlines()[1:])
    assert row["failing cells"] == "3"  # the op's ge cell in each shape mode
    assert float(row["drawing wall s/failing cell"]) > 0
    assert float(row["drawing cpu s/failing cell"]) > 0


def test_device_cost_covers_the_harness_aten_ops():
    rows = device_cost.main(["--number", "20"])
    assert set(rows) == set(device_cost.OPS)
    assert all(cpu > 0 and npu > 0 for cpu, npu in rows.values())


@pytest.mark.slow
def test_generated_library_is_one_check_target(tmp_path):
    module = generate_library(tmp_path, 2)
    run = harness_throughput.run_check(module, tmp_path, ["eager"])
    # run_check raises SystemExit when the check exits non-zero.
    assert 0 < run.first_result <= run.seconds


def test_the_incremental_bench_reruns_only_the_edited_op(tmp_path, monkeypatch):
    """With the eager column only, to stay short: the bench's edit must reach the cache."""
    monkeypatch.delenv("OPSDK_NO_CACHE")
    monkeypatch.setattr(harness_throughput, "names", lambda: ("eager",))
    row = harness_throughput.incremental(2, tmp_path)  # asserts what the rerun ran
    assert row["rerun_cpu_s"] > 0 and row["own_matrix_cpu_s"] > 0


def test_the_phase_bench_splits_both_runs_by_phase(monkeypatch):
    """The eager and aot_eager columns only, to stay short: no TorchAir phase then."""
    monkeypatch.setattr(harness_throughput, "names", lambda: ("eager", "aot_eager"))
    spent = harness_throughput.by_phase(1, "default")
    alone, full = spent["aot_eager"], spent["full"]
    assert "cells eager" not in alone and full["cells eager"] > 0
    assert alone["cells aot_eager"] > 0 and full["cells aot_eager"] > 0
    assert "TorchAir + npugraph_ex import" not in full
    for run in (alone, full):
        assert run["total"] >= run["process start"] + run["cells aot_eager"]


def test_the_opdef_sweep_reports_packages_and_refusals(tmp_path, capsys):
    """A checkout of two op_host files: one becomes a package (opsdk new included), the
    other is refused by the reader, its reason and file named."""
    import opdef_sweep

    good = tmp_path / "math" / "add_one" / "op_host" / "add_one_def.cpp"
    bad = tmp_path / "math" / "odd_one" / "op_host" / "odd_one_def.cpp"
    for path in (good, bad):
        path.parent.mkdir(parents=True)
    good.write_text(
        "namespace ops {\nclass AddOne : public OpDef {\npublic:\n"
        "    explicit AddOne(const char* name) : OpDef(name)\n    {\n"
        '        this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'
        '        this->Output("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'
        "    }\n};\nOP_ADD(AddOne);\n}\n"
    )
    bad.write_text(good.read_text().replace("AddOne", "OddOne").replace("Format(", "Shape("))
    rows = opdef_sweep.main([str(tmp_path), "--scaffold", "--json", str(tmp_path / "rows.json")])
    assert [(r.path, r.package) for r in rows] == [
        ("math/add_one/op_host/add_one_def.cpp", True),
        ("math/odd_one/op_host/odd_one_def.cpp", False),
    ]
    out = capsys.readouterr().out
    assert "files 2: read 1 (50.0 %), packages 1 (50.0 %)" in out
    assert "cannot read the OpParamDef method .Shape() of _" in out
    assert "odd_one_def.cpp:6: cannot read" in out


def test_the_infer_sweep_compiles_runs_and_groups_the_rest(tmp_path, capsys, monkeypatch):
    """A checkout of three infershape files: one compiles and runs on a case of its OpDef,
    one does not compile (its reason named, with a file), one registers nothing."""
    import infer_sweep

    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "cache"))  # main sets it too
    host = tmp_path / "math" / "add_one" / "op_host"
    host.mkdir(parents=True)
    (host / "add_one_def.cpp").write_text(
        "namespace ops {\nclass AddOne : public OpDef {\npublic:\n"
        "    explicit AddOne(const char* name) : OpDef(name)\n    {\n"
        '        this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'
        '        this->Output("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});\n'
        "    }\n};\nOP_ADD(AddOne);\n}\n"
    )
    good = (
        '#include "register/op_impl_registry.h"\n'
        "static ge::graphStatus InferShapeAddOne(gert::InferShapeContext* context)\n{\n"
        "    *context->GetOutputShape(0) = *context->GetInputShape(0);\n"
        "    return ge::GRAPH_SUCCESS;\n}\n"
        "IMPL_OP_INFERSHAPE(AddOne).InferShape(InferShapeAddOne);\n"
    )
    (host / "add_one_infershape.cpp").write_text(good)
    (host / "odd_infershape.cpp").write_text(
        good.replace("AddOne", "Odd").replace("GetInputShape(0)", "GetPlatformInfo()")
    )
    (host / "none_infershape.cpp").write_text("// registers nothing\n")
    rows = infer_sweep.main([str(tmp_path), "--json", str(tmp_path / "rows.json")])
    assert {r.path.rpartition("/")[2]: r.outcome for r in rows} == {
        "add_one_infershape.cpp": "ran",
        "none_infershape.cpp": "no IMPL_OP_INFERSHAPE(...).InferShape",
        "odd_infershape.cpp": "does not compile",
    }
    out = capsys.readouterr().out
    assert "infershape files 3: compiled 1, ran on a case 1 (33.3 %)" in out
    assert "odd_infershape.cpp:4:" in out and "GetPlatformInfo" in out


@pytest.mark.slow
def test_the_audit_sweep_reruns_from_the_cache(monkeypatch):
    monkeypatch.delenv("OPSDK_NO_CACHE")
    rows = audit_sweep.main(["-k", "npu_rms_norm_backward"])
    assert rows["cold"]["cells"] == rows["cached"]["cached"] > 0
    assert rows["cold"]["cached"] == 0 and rows["cold"]["audited"] == "audited 2 of 2 ops"


@pytest.mark.slow
def test_the_audit_bench_measures_audit_against_check_of_one_real_op():
    row = audit_sweep.versus_check("npu_rms_norm", rounds=1)
    assert row["audit"]["cells"] == 7 and row["check"]["cells"] > row["audit"]["cells"]
    assert row["ratio_cells_s"] == round(row["audit"]["cells_s"] / row["check"]["cells_s"], 2)


@pytest.mark.slow
def test_the_fusion_cost_bench_compares_the_fusion_column_with_npugraph_ex():
    """A process of its own, for the reason above."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "fusion_cost.py")], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "npugraph_ex,fusion: bench_add_rms_norm: npugraph_ex static " in done.stdout
    assert "median fusion/npugraph_ex over 1 run(s): {'steady': " in done.stdout, done.stdout
    assert "'warm': " in done.stdout, done.stdout


def test_the_tiling_sweep_takes_vector_ops_runs_them_and_names_what_is_missing(tmp_path):
    """A checkout holding the planted tiling project with its OpDef and a vector kernel (it
    runs on a case of its definition), a tiling calling a name no stand-in has (grouped
    by that name), and a cube op's tiling (not a vector op: not taken)."""
    import shutil

    import tiling_sweep

    op = tmp_path / "math" / "row_scale"
    shutil.copytree(Path(__file__).parent / "tiling_project", op)
    (op / "op_host" / "row_scale_class_tiling.cpp").unlink()  # an op without a definition
    (op / "op_host" / "row_scale_def.cpp").write_text(
        "namespace ops {\nclass RowScale : public OpDef {\npublic:\n"
        "    explicit RowScale(const char* name) : OpDef(name)\n    {\n"
        '        this->Input("x").DataType({ge::DT_FLOAT16});\n'
        '        this->Output("y").DataType({ge::DT_FLOAT16});\n'
        '        this->Attr("scale").AttrType(OPTIONAL).Float(2.0);\n'
        "    }\n};\nOP_ADD(RowScale);\n}\n"
    )
    (op / "op_kernel" / "row_scale.cpp").write_text("// DataCopy, Muls: a vector kernel\n")
    odd = tmp_path / "math" / "odd" / "op_host"
    odd.mkdir(parents=True)
    (odd.parent / "op_kernel").mkdir()
    (odd.parent / "op_kernel" / "odd.cpp").write_text("// Adds\n")
    (odd / "odd_tiling.cpp").write_text(
        '#include "register/op_impl_registry.h"\n'
        "static ge::graphStatus TilingOdd(gert::TilingContext* context)\n"
        "{\n    return NoSuchHelper(context);\n}\n"
        "IMPL_OP_OPTILING(Odd).Tiling(TilingOdd);\n"
    )
    cube = tmp_path / "matmul" / "mm"
    shutil.copytree(odd.parent, cube)
    (cube / "op_kernel" / "odd.cpp").write_text("// Matmul<A, B, C> mm;\n")
    files = tiling_sweep.vector_tilings(tmp_path)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "math/odd/op_host/odd_tiling.cpp",
        "math/row_scale/op_host/row_scale_tiling.cpp",
    ]
    index = tiling_sweep.infer_sweep.definitions(tmp_path)
    rows = [tiling_sweep.sweep_file("t", tmp_path, f, index, tries=4) for f in files]
    assert [r.outcome for r in rows] == ["does not compile", "ran"]
    assert tiling_sweep.kind(rows[0]) == "missing NoSuchHelper"
    assert "RowScale: ran" in rows[1].ops and rows[1].findings == []
    assert "RowScaleCrash: no definition in the repository" in rows[1].ops


def test_the_kernel_cost_bench_runs_a_real_op_s_cases_as_the_ascendc_column_does(tmp_path):
    """Two cases of ops-math's AddV2 from the mirror (skipped without it): tiled by its
    own TilingFunc, launched, its outputs torch's, no finding."""
    import kernel_cost

    if not (kernel_cost.MIRRORS / "hicann+ops-math" / "repo").is_dir():
        pytest.skip("the public mirror of hicann/ops-math is not on this machine (CI)")
    op = kernel_cost.OPS["AddV2"]
    done = kernel_cost.run_cases(op, kernel_cost.extract(op, tmp_path), range(2))
    assert (done["launched"], done["findings"], done["wrong"]) == (2, [], []), done
    assert done["seconds"]["launch"] > 0


def test_the_kernel_run_sweep_runs_an_entry_s_tiling_and_kernel_and_says_why_not(tmp_path):
    """The planted TailAdd project as a repository's op (its OpDefs as ``*_def.cpp``):
    tail_add runs on a case of its definition, its output shaped by its own InferShape
    (flat: its tiling refuses an output shaped as the input); tail_add_past, planted with
    a call the stand-in lacks, is a kernel compile missing that name; lone_add, an entry
    no op registers a tiling for, is said so. One tiling and one InferShape library."""
    import shutil

    import kernel_run_sweep

    op = tmp_path / "math" / "tail_add"
    shutil.copytree(Path(__file__).parent / "ascendc_project", op)
    for definition in ("tail_add", "tail_add_past"):
        (op / "op_host" / f"{definition}.cpp").rename(op / "op_host" / f"{definition}_def.cpp")

    def edit(path: Path, old: str, new: str) -> None:
        assert old in path.read_text()
        path.write_text(path.read_text().replace(old, new))

    edit(
        op / "op_host" / "tail_add_infershape.cpp",
        "*context->GetOutputShape(0) = *context->GetInputShape(0);",
        "gert::Shape* z = context->GetOutputShape(0);\n    z->SetDimNum(1);\n"
        "    z->SetDim(0, context->GetInputShape(0)->GetShapeSize());",
    )
    edit(
        op / "op_host" / "tail_add_tiling.cpp",
        "    uint32_t bytes = 0;",
        "    if (context->GetOutputShape(0)->GetStorageShape().GetDimNum() != 1 ||\n"
        "        context->GetInputShape(0)->GetStorageShape().GetDimNum() < 2) {\n"
        "        return ge::GRAPH_FAILED;\n    }\n    uint32_t bytes = 0;",
    )
    past = op / "op_kernel" / "tail_add_past.cpp"
    lone = tmp_path / "math" / "lone_add"
    for folder in ("op_host", "op_kernel"):
        (lone / folder).mkdir(parents=True)
    shutil.copy(op / "op_host" / "tail_add_def.cpp", lone / "op_host" / "lone_add_def.cpp")
    entry = past.read_text().replace("void tail_add_past(", "void lone_add(")
    (lone / "op_kernel" / "lone_add.cpp").write_text(
        entry.replace('"tail_add.h"', '"../../tail_add/op_kernel/tail_add.h"')
    )
    edit(past, "    op.Process();", "    op.Process();\n    NoSuchAdd(sum);")

    rows = kernel_run_sweep.main([str(tmp_path), "--tries", "4", "--jobs", "1"])
    outcome = {r.entry.rpartition("/")[2]: (r.outcome, r.reason) for r in rows}
    assert outcome == {
        "lone_add.cpp": ("no tiling", "no TilingFunc registered for it"),
        "tail_add.cpp": ("ran", ""),
        "tail_add_past.cpp": ("kernel compile", "missing NoSuchAdd"),
    }, rows
    ran = next(r for r in rows if r.outcome == "ran")
    assert ran.op_type == "TailAdd" and ran.case.startswith("inputs [16, 16]"), ran
    assert ran.findings == [] and rows[-1].missing == ["NoSuchAdd"]


def test_the_kernel_run_sweep_gives_a_dynamic_input_or_output_as_a_tensor_list():
    """A case's instances of a dynamic output grouped as a list (the case gives each as
    many), the kernel's tensor list of them: a member per instance."""
    import kernel_run_sweep

    from opsdk.cann import infer, kernel
    from opsdk.irdef import Output

    x, total = infer.Given(0, (16, 16)), infer.Given(0, (1,))
    declared = (Output("y", kind="dynamic"), Output("total"))
    grouped = kernel_run_sweep._outputs(declared, (x, x, total))
    assert grouped == [(x, x), total]
    assert (
        kernel_run_sweep._tensor(grouped[0], "float32", kernel_run_sweep._size)
        == [kernel.Member((16, 16), 1024)] * 2
    )
    assert kernel_run_sweep._tensor(None, None, kernel_run_sweep._size) is None


def test_the_kernel_run_sweep_names_what_it_leaves_out_and_where_a_method_is(tmp_path):
    """An out-of-scope reason's kind is what it says, not an arch35 in a file's name; an
    unlinked method is found by its class (an absent input's dtype:
    tests/unit/test_ascendc.py::test_an_absent_input_s_dtype_is_its_definition_row_s)."""
    import kernel_run_sweep as sweep

    from opsdk.cann import infer

    said = "is_inf_tiling_arch35.h builds on opbase's atvoss tiling framework (atvoss/x.h)"
    assert sweep._scope_kind(said) == "atvoss"
    assert sweep._scope_kind("row_sum.cpp is an arch35 (MicroAPI/SIMT) kernel") == "arch35"
    host = tmp_path / "a" / "op_host"
    host.mkdir(parents=True)
    (host / "a.cpp").write_text("void ATiling::SetTilingData()\n{\n}\n")
    (host / "b.cpp").write_text("void BTiling::SetTilingData()\n{\n}\n")
    unlinked = infer.Unlinked("optiling::ATiling::SetTilingData()", None)
    assert sweep.defined_in(unlinked, tmp_path) == host / "a.cpp"
