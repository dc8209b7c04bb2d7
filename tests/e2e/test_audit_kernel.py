"""``opsdk audit PKG --ir DIR``'s ``ascendc`` check: the AscendC tiling and kernel of the
GE ops a library's converters lower to, run offline by the ``ascendc`` column's engine
(audit_kernel_library: a team's library lowering to tests/e2e/ascendc_project's
TailAdd and TailAddPast). TailAddPast's last core writes past z on the declared 60-byte
case: a finding in layer ``kernel`` with its block, case and line, naming the Meta
function that sized z and the kernel; TailAdd, its twin, passes. The real RmsNorm of
hicann/ops-nn under torch_npu's npu_rms_norm: tests/e2e/test_audit_infer.py."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).with_name("audit_kernel_library") / "team_kernel"
PROJECT = Path(__file__).with_name("ascendc_project")


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def audited(opsdk_cli_module):
    run = opsdk_cli_module(
        "audit", LIBRARY, "--ir", PROJECT, "--checks", "ascendc", json_report=True
    )  # fmt: skip
    return run, {r["op"].split("::")[1]: r for r in run.report["results"]}


def test_a_kernel_writing_past_the_output_the_meta_function_sized_is_a_finding(audited):
    run, cells = audited
    assert run.code == 1, run.stdout + run.stderr
    cell = cells["tail_add_past"]
    assert (cell["status"], cell["layer"], cell["shapes"]) == ("fail", "kernel", "static"), cell
    said = cell["message"]
    kernel_at = (
        f"op_kernel/tail_add.h:{_line(PROJECT / 'op_kernel' / 'tail_add.h', 'DataCopy(zGm')}"
    )
    meta_at = f"{LIBRARY / '__init__.py'}:{_line(LIBRARY / '__init__.py', 'register_fake(')}"
    assert "case F32(3, 5), F32(3, 5): GE node TailAddPast (TailAddPast)" in said, said
    assert "the kernel writes past output z, which the Meta function" in said, said
    assert f"gm-out-of-bounds in block 1 of case F32(3, 5), F32(3, 5) at {kernel_at}" in said
    assert meta_at in said and "4 B past its end" in said, said
    assert "the Meta function and the kernel (in " in said and "disagree" in said, said
    assert "F32(4, 8)" not in said  # the aligned case runs clean
    # the OpDef's float16 row at the declared case's shapes: 30 B, z sized by the C++
    row = "TailAddPast on its definition's row F32(3, 5), F32(3, 5) as FLOAT16, FLOAT16: "
    assert f"{row}the kernel writes past output z, which its C++ InferShape" in said, said
    assert f"in block 0 of case F32(3, 5), F32(3, 5) as FLOAT16, FLOAT16 at {kernel_at}" in said
    assert "2 B past its end" in said, said


def test_its_correct_twin_passes_on_every_declared_case(audited):
    _, cells = audited
    twin = cells["tail_add"]
    assert twin["status"] == "pass", twin
    said = "kernel of TailAdd on 2 of its cases' GE nodes, 1 of its definition's other dtype"
    assert said in twin["message"], twin  # float16 at the first case's shapes
