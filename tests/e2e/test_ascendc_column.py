"""The ``ascendc`` column: a package made ``--from-cann`` from an AscendC project runs the
op's own tiling and kernel on each static case (tests/e2e/ascendc_project: TailAdd, and
TailAddPast, whose last core moves its unaligned tail with DataCopy rounded up to 32 B,
past the end of z). A package without AscendC sources has no such cells:
tests/unit/test_columns.py::test_a_registered_column_is_in_every_part_of_opsdk."""

import re
import shutil
from pathlib import Path

import pytest
from scaffolded import edit

PROJECT = Path(__file__).parent / "ascendc_project"
UNALIGNED = "Support(F32(3, 5), F32(3, 5)),"  # 60 B: the last core's tail is not 32 B


@pytest.fixture(scope="module")
def checked(opsdk_cli_module, tmp_path_factory):
    """The package, its references written and an unaligned case added, checked once in
    static shapes (the ascendc column's one mode: every other column runs as for any op)."""
    out = tmp_path_factory.mktemp("ascendc")
    run = opsdk_cli_module("new", "--from-cann", PROJECT, "--namespace", "asc_twin", "--out", out)
    assert run.code == 0, run.stderr
    pkg = out / "ascendc_project"
    for folder in (pkg / "ascendc_project", pkg / "ascendc_project" / "tail_add_past"):
        kernels = folder / "kernels.py"
        text, count = re.subn(
            r"raise ImplementMe\(__file__, .*\)", "return x + y", kernels.read_text()
        )
        assert count == 1
        kernels.write_text(text.replace("ImplementMe, ", ""))
        specs = folder / "specs.py"
        text = specs.read_text()
        assert "Support(F32(4, 4), F32(4, 4))," in text
        specs.write_text(
            text.replace(
                "Support(F32(4, 4), F32(4, 4)),", f"{UNALIGNED} Support(F32(4, 4), F32(4, 4)),"
            )
        )
    assert (pkg / "ascendc_project" / "cann_kernel" / "op_kernel" / "tail_add.cpp").is_file()
    return pkg, opsdk_cli_module(
        "check", pkg, "--shapes", "static", "--contexts", "none", json_report=True
    )


def test_a_kernel_writing_past_its_output_fails_in_layer_kernel_with_block_case_and_line(checked):
    _, checked = checked
    [cell] = checked.cells(op="asc_twin::tail_add_past", column="ascendc")
    assert (cell["status"], cell["layer"], cell["shapes"]) == ("fail", "kernel", "static"), cell
    line = next(
        i
        for i, text in enumerate((PROJECT / "op_kernel" / "tail_add.h").read_text().splitlines(), 1)
        if "DataCopy(zGm" in text
    )
    said = cell["message"]
    assert "gm-out-of-bounds in block 1 of case F32(3, 5), F32(3, 5)" in said, said
    assert f"op_kernel/tail_add.h:{line}" in said and "4 B past its end" in said, said
    assert checked.code == 1


def test_its_correct_twin_passes_every_cell_and_the_other_columns_are_unchanged(checked):
    _, checked = checked
    ascendc = checked.cells(column="ascendc")
    assert {(r["op"], r["shapes"]) for r in ascendc} == {
        ("asc_twin::tail_add", "static"),
        ("asc_twin::tail_add_past", "static"),
    }  # static shapes only: the kernel runs on concrete sizes
    failed = [r for r in checked.cells() if r["status"] != "pass"]
    assert [(r["op"], r["column"]) for r in failed] == [("asc_twin::tail_add_past", "ascendc")], [
        f"{r['op']} {r['column']}: {r['message']}" for r in failed
    ]


def test_what_the_stand_in_lacks_is_not_run_and_a_wrong_number_or_tiling_fails(
    checked, opsdk_cli, tmp_path
):
    pkg = Path(shutil.copytree(checked[0], tmp_path / "pkg"))
    past = pkg / "ascendc_project" / "tail_add_past"
    edit(
        past / "cann_kernel" / "op_kernel" / "tail_add.h",
        "Add(z, x, y, count);",
        "MrgSort(z, x, y);",
    )
    edit(pkg / "ascendc_project" / "kernels.py", "return x + y", "return x - y")
    argv = ("--backend", "ascendc", "--shapes", "static")
    run = opsdk_cli("check", pkg, *argv, json_report=True)
    [lacking] = run.cells(op="asc_twin::tail_add_past")
    assert lacking["status"] == "skip", lacking  # never a pass
    assert lacking["message"].startswith(
        "not run: the kernel, against opsdk's AscendC stand-in, does not compile"
    ), lacking
    assert "MrgSort" in lacking["message"] and "tail_add.h:" in lacking["message"]
    assert any("ascendc: not run" in w for w in lacking["warnings"]), lacking
    assert f"  UserWarning: ascendc: {lacking['message']}\n" in run.stdout, run.stdout  # whole
    [wrong] = run.cells(op="asc_twin::tail_add")
    assert (wrong["status"], wrong["layer"]) == ("fail", "kernel"), wrong
    said = wrong["message"]  # where they differ, on which inputs, and either may be wrong
    assert re.search(r"the kernel's output z: \d+ of 15 elements differ, the worst at", said), said
    assert "(float32 within rtol 1.3e-06, atol 1e-05;" in said, said
    assert "inputs x float32[3, 5], y float32[3, 5];" in said, said
    assert "your reference (kernels.py: tail_add_reference) differ: fix whichever" in said, said

    tiling = pkg / "ascendc_project" / "cann_kernel" / "op_host" / "tail_add_tiling.cpp"
    edit(tiling, "SetBlockDim((total + perCore - 1) / perCore)", "SetBlockDim(0)")
    run = opsdk_cli("check", pkg, *argv, json_report=True)
    [untiled] = run.cells(op="asc_twin::tail_add")
    assert (untiled["status"], untiled["layer"]) == ("fail", "tiling"), untiled
    assert "block_dim: block dim 0" in untiled["message"], untiled
    assert "tail_add_tiling.cpp:" in untiled["message"], untiled
