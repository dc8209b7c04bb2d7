"""``opsdk audit PKG --ir DIR``'s ``infer`` check: a team's Meta functions held to the C++
InferShape / InferDataType of the GE ops their converters lower to (audit_infer_library:
the library, its CANN project with its own C++). Planted disagreements fail in layer
``infer`` naming the Meta function's and the C++ function's file:line, their fixed twins
pass; what the audit cannot give the C++ (a value-depend input's data) and a derived case
the C++ refuses are not checked, never findings (the exploration's smallest case the
C++ refuses and the Meta function takes is one); without C++ in ``--ir`` there are no
``infer`` cells. The real torch_npu ops against hicann/ops-nn skip when its mirror is
absent."""

import shutil
from pathlib import Path

import mirrors
import pytest

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).with_name("audit_infer_library")
CPP = "cann/op_host/team_infer_infershape.cpp"
OPS_NN = mirrors.MIRRORS / "hicann+ops-nn" / "repo"


def _cells(run) -> dict[tuple[str, str], dict]:
    return {(r["op"].split("::")[1], r["shapes"]): r for r in run.report["results"]}


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _audit(opsdk_cli, library: Path, *more):
    return opsdk_cli(
        "audit", library / "team_infer", "--ir", library / "cann", "--checks", "infer", *more,
        json_report=True,
    )  # fmt: skip


@pytest.fixture(scope="module")
def planted(opsdk_cli_module):
    return _audit(opsdk_cli_module, LIBRARY)


@pytest.mark.parametrize(
    ("op", "fake", "cpp", "static", "dynamic"),
    [
        ("row_sum", 'register_fake("team_infer::row_sum")', "InferShapeKeepLast(",
         "C++ [2, 1], Meta function [2]", "C++ [-1, 1], Meta function [-1]"),
        ("to_float", 'register_fake("team_infer::to_float")', "InferDtypeFloat(",
         "C++ DT_FLOAT, Meta function DT_FLOAT16", "C++ DT_FLOAT, Meta function DT_FLOAT16"),
    ],
)  # fmt: skip
def test_a_planted_disagreement_fails_in_infer_with_both_sides_file_line(
    planted, op, fake, cpp, static, dynamic
):
    assert planted.code == 1, planted.stdout + planted.stderr
    cells = _cells(planted)
    source = LIBRARY / "team_infer" / "__init__.py"
    meta_at = f"{source}:{_line(source, fake)}"
    cpp_at = f"{LIBRARY / CPP}:{_line(LIBRARY / CPP, 'graphStatus ' + cpp)}"
    for mode, said in (("static", static), ("dynamic", dynamic)):
        cell = cells[op, mode]
        assert (cell["status"], cell["layer"]) == ("fail", "infer"), cell
        assert said in cell["message"] and meta_at in cell["message"], cell["message"]
        assert cpp_at in cell["message"], cell["message"]


def test_what_the_audit_cannot_give_the_cpp_is_not_checked_never_a_finding(planted):
    cells = _cells(planted)
    for mode in ("static", "dynamic"):
        depend = cells["resize_to", mode]
        assert depend["status"] == "skip", depend
        assert (
            "reads value-depend inputs ['size'], whose data an audit has not" in (depend["message"])
        )
    assert "not explored (its C++ reads the data of size" in cells["resize_to", "static"]["message"]
    # a derived case the C++ refuses is no finding (GE compiles it with -1 rows: held, and
    # agrees); the exploration's smallest such case is one (the Meta function takes 2 rows
    # the C++ refuses: the graph traces, GE fails to compile it)
    assert cells["one_row", "dynamic"]["status"] == "pass"
    refused = cells["one_row", "static"]
    assert (refused["status"], refused["layer"]) == ("fail", "infer"), refused
    assert "explored: C++ refuses on Support(F16(2)) (met first as" in refused["message"]
    assert "x has 2 rows, supports one" in refused["message"]
    twin = cells["row_mean", "static"]
    assert twin["status"] == "pass" and "held to the C++ inference of RowMean" in twin["message"]


def test_the_fixed_twins_pass(tmp_path, opsdk_cli):
    fixed = tmp_path / "fixed"
    shutil.copytree(LIBRARY, fixed)
    source = fixed / "team_infer" / "__init__.py"
    text = source.read_text()
    text = text.replace(
        "def _row_sum_fake(x):\n    return x.new_empty(x.shape[:-1])",
        "def _row_sum_fake(x):\n    return x.new_empty((*x.shape[:-1], 1))",
    )
    text = text.replace(
        "def _to_float_fake(x):\n    return torch.empty_like(x)",
        "def _to_float_fake(x):\n    return torch.empty_like(x, dtype=torch.float32)",
    )
    source.write_text(text)
    run = _audit(opsdk_cli, fixed, "-k", "to_")
    clean = _audit(opsdk_cli, fixed, "-k", "row_sum")
    for done in (run, clean):
        assert done.code == 0, done.stdout + done.stderr
        assert {r["status"] for r in done.report["results"]} == {"pass"}, done.report["results"]
        assert len(done.report["results"]) == 2


def test_without_cpp_in_ir_there_are_no_infer_cells(opsdk_cli):
    only_defs = opsdk_cli(
        "audit", LIBRARY / "team_infer", "--ir", LIBRARY / "cann" / "op_host" / "row_mean_def.cpp",
        "-k", "row_mean", "--shapes", "static", json_report=True,
    )  # fmt: skip
    assert only_defs.code == 0, only_defs.stdout + only_defs.stderr
    checks = {r["column"] for r in only_defs.report["results"]}
    assert checks == {"schema", "fake", "converter"}
    with_cpp = opsdk_cli(
        "audit", LIBRARY / "team_infer", "--ir", LIBRARY / "cann",
        "-k", "row_mean", "--shapes", "static", json_report=True,
    )  # fmt: skip
    assert {r["column"] for r in with_cpp.report["results"]} == checks | {"infer"}


def test_torch_npu_ops_are_held_to_the_production_infershape_of_ops_nn(tmp_path, opsdk_cli, wheel):
    """The real files: npu_rms_norm's Meta function against hicann/ops-nn's RmsNorm
    InferShape / InferDataType (its op folder, extracted from the public mirror); in the
    same run (one start-up) the ``ascendc`` check runs RmsNorm's own tiling and kernel on
    the declared cases and its own host tests, with no finding
    (tests/e2e/test_audit_kernel.py holds the planted ones)."""
    if not OPS_NN.is_dir():
        pytest.skip(f"the public mirror of hicann/ops-nn is not on this machine ({OPS_NN})")
    tree = mirrors.archive(OPS_NN, tmp_path / "ops-nn", "norm/rms_norm", "common")
    run = opsdk_cli(
        "audit", "torch_npu", "-k", "npu_rms_norm", "--checks", "infer,ascendc", "--ir", tree,
        json_report=True,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    cells = {(r["op"], r["column"], r["shapes"]): r for r in run.report["results"]}
    for mode in ("static", "dynamic"):
        cell = cells["npu::npu_rms_norm", "infer", mode]
        assert cell["status"] == "pass", cell
        assert "held to the C++ inference of RmsNorm" in cell["message"]
    # the others lower to op types whose C++ is not in this tree: not checked, said why
    other = cells["npu::npu_rms_norm_backward", "infer", "static"]
    assert other["status"] == "skip", other
    assert "no GE node it lowers to has a C++ InferShape" in other["message"]
    kernel = cells["npu::npu_rms_norm", "ascendc", "static"]
    assert kernel["status"] == "pass", kernel
    said = (
        "ran the AscendC tiling and kernel of RmsNorm on 2 of its cases' GE nodes, 3 of its "
        "definition's other dtype rows, 3 of its own host tests' cases"
    )
    assert said in kernel["message"], kernel
    assert ("npu::npu_rms_norm", "ascendc", "dynamic") not in cells  # concrete sizes only
