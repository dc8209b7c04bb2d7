"""``opsdk check``'s ``ascendc`` column on packages made ``--from-cann`` from public
projects read from the mirrors at test time (skipped without them), as a user makes
them: ``opsdk new``, the reference written in ``kernels.py``, the cases in ``specs.py``
(bench/_references.py does both).

ops-nn's experimental SoftmaxV2 holds three defects, each found with its block, case and
line: a UB overflow from a last dim of 3,505 float32 (its tiling counts 4 buffers a row,
its kernel allocates 14), over a non-last dim a workspace read before any core wrote it
and cores writing the same workspace rows without atomics, and its tiling's
``dimarr[-1]`` read for dim = -1. Production ops of the sample give no finding
(``test_production_ops_give_no_false_finding``)."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import _references  # noqa: E402

SOFTMAX_V2 = _references.Reference(
    "SoftmaxV2",
    "ops-nn",
    "experimental/activation/softmax_v2",
    "return torch.softmax(x, dim)",
    ("Support(F32(16, 64), dim=Fixed(1))",),
)


def _check(opsdk_cli, package: Path):
    run = opsdk_cli(
        "check", package, "--backend", "ascendc", "--shapes", "static", json_report=True
    )
    assert run.report is not None, run.stderr
    return run


def _line(path: Path, statement: str) -> int:
    """The first line of ``path`` holding ``statement``."""
    lines = path.read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if statement in text)


@pytest.fixture(scope="module")
def softmax_v2(opsdk_cli_module, tmp_path_factory):
    """The package made from the mirror's project, its reference written; returns the
    op's folder in it and a check of one case."""
    if not _references.available([SOFTMAX_V2]):
        pytest.skip("the public mirror of hicann/ops-nn is not on this machine (CI)")
    work = tmp_path_factory.mktemp("softmax_v2")
    package = _references.scaffold([SOFTMAX_V2], work, namespace="smv2")
    folder = _references.folder_of(package, SOFTMAX_V2.name)
    kernel = next(folder.rglob("op_kernel/softmax_v2.h"))
    tiling = next(folder.rglob("op_host/softmax_v2_tiling.cpp"))

    def check(case: str) -> dict:
        _references.write_cases(folder, [case])
        run = _check(opsdk_cli_module, package)
        [cell] = run.cells(op="smv2::softmax_v2", column="ascendc")
        return cell

    return check, kernel, tiling


def test_softmax_v2_overflows_ub_from_a_last_dim_of_3505_float32(softmax_v2):
    """14 buffers of a row, each rounded up to 32 B as InitBuffer rounds it: 3,504 float32
    fit UB's 196,608 B, 3,505 do not (counted unrounded, as the tiling would: 3,511)."""
    check, kernel, _ = softmax_v2
    cell = check("Support(F32(4, 3505), dim=Fixed(1))")
    assert (cell["status"], cell["layer"]) == ("fail", "kernel"), cell
    line = _line(kernel, "pipe.InitBuffer(temp1")  # the 14th buffer of a row
    said = cell["message"]
    case, at = re.escape("case F32(4, 3505), dim=Fixed(1)"), f"op_kernel/softmax_v2.h:{line}"
    assert re.search(rf"ub-overflow in block \d of {case} at {at}:", said), said  # every block
    assert "beyond UB's 196608 B" in said, said
    assert "ub-overflow" not in check("Support(F32(4, 3504), dim=Fixed(1))")["message"]


def test_softmax_v2_over_a_non_last_dim_reads_unwritten_workspace_and_races(softmax_v2):
    check, kernel, _ = softmax_v2
    cell = check("Support(F32(4, 16, 32), dim=Fixed(1))")
    assert (cell["status"], cell["layer"]) == ("fail", "kernel"), cell
    said = cell["message"]
    read = _line(kernel, "AscendC::DataCopyPad(mLocalin, mGm[elepartnum")  # CopyIn, pass 0
    write = _line(kernel, "AscendC::DataCopyPad(mGm[elepartnum")  # CopyOut, pass 0
    case, at = re.escape("case F32(4, 16, 32), dim=Fixed(1)"), "op_kernel/softmax_v2.h"
    # the block is the first of those making the access to report it (threads race)
    unwritten = rf"workspace-read-unwritten in block \d of {case} at {at}:{read}: a read of"
    assert re.search(unwritten, said), said
    race = re.search(
        rf"gm-write-race in block (\d) of {case} at {at}:{write}: blocks (\d) and", said
    )
    assert race and race[1] != race[2], said


def test_softmax_v2_s_tiling_reads_dimarr_minus_one_for_dim_minus_one(softmax_v2):
    check, _, tiling = softmax_v2
    cell = check("Support(F32(16, 64), dim=Fixed(-1))")
    assert (cell["status"], cell["layer"]) == ("fail", "tiling"), cell
    said = cell["message"]
    assert "crash: the Tiling crashed (read of 4 bytes: dynamic-stack-buffer-overflow" in said
    assert f"softmax_v2_tiling.cpp:{_line(tiling, 'totalLengthx / dimarr[dim]')}" in said, said


TAILS = {  # each op, and the statement moving its output
    _references.Reference(
        "AddV2", "ops-math", "experimental/math/add_v2", "return x1 + x2",
        ("Support(F32(1003), F32(1003))",),
    ): "DataCopy(outputGMZ[",
    _references.Reference(
        "Gelu", "ops-nn", "experimental/activation/gelu",
        "return x / (1 + torch.exp(-1.595769122 * (x + 0.0455399241 * x**3)))",
        ("Support(F32(1003))",),
    ): "DataCopy(yGm[",
}  # fmt: skip


def test_add_v2_and_gelu_write_past_their_outputs_at_unaligned_sizes(opsdk_cli, tmp_path):
    """ops-math's AddV2 and ops-nn's Gelu (experimental) move the last core's tail with
    DataCopy rounded up to whole 32 B blocks: 20 B past the 4,012 B of their output."""
    if not _references.available(TAILS):
        pytest.skip("the public mirrors of hicann/ops-nn and ops-math are not on this machine")
    package = _references.scaffold(list(TAILS), tmp_path, namespace="tails")
    cells = {c["op"]: c for c in _check(opsdk_cli, package).cells(column="ascendc")}
    for reference, write in TAILS.items():
        cell, name = cells[f"tails::{reference.name}"], reference.name
        assert (cell["status"], cell["layer"]) == ("fail", "kernel"), cell
        at = (
            f"op_kernel/{name}.h:{_line(next(tmp_path.rglob(f'{name}/op_kernel/{name}.h')), write)}"
        )
        found = rf"gm-out-of-bounds in block \d+ of case F32\(1003\)[^:]* at {at}: GM write"
        assert re.search(
            rf"{found} of \d+ B at offset \d+ of \w+ \(4012 B\): 20 B past", cell["message"]
        )


# Production RmsNorm, ops-math's AddV2 at sizes a multiple of 32 B, and 13 more production
# ops of the sample (bench/kernel_sample.py runs all 20 with more cases), a case each: each
# dtype and tiling key is a kernel build, about 3 s of CPU. HistogramV2 adds into the y its
# OpDef has the runtime zero (InitValue), AddRmsNormCast's kernel includes RmsNorm's.
ADD_V2 = _references.Reference(
    "AddV2",
    "ops-math",
    "experimental/math/add_v2",
    "return x1 + x2",
    ("Support(F32(1024), F32(1024))", "Support(F32(48, 64), F32(48, 64))"),
)
NO_FALSE_FINDING = (
    "RmsNorm", "AddRmsNorm", "DeepNorm", "Glu", "GeGluV2", "SituGlu", "AddLayerNorm",
    "GroupNormSilu", "Pows", "TransformBiasRescaleQkv", "AmpUpdateScale", "AddRmsNormCast",
    "Segsum", "HistogramV2",
)  # fmt: skip


@pytest.mark.slow
def test_production_ops_give_no_false_finding(opsdk_cli, tmp_path):
    """Every case of each op passes: tiled by its own TilingFunc, run on the stand-in with
    no finding, its outputs the reference's within the op's tolerances (AddLayerNorm's
    case leaves its optional bias out: the kernel gets no buffer for it)."""
    references = [ADD_V2] + [
        dataclasses.replace(r, cases=r.cases[:1])
        for r in map(_references.BY_NAME.get, NO_FALSE_FINDING)
    ]
    if not _references.available(references):
        pytest.skip("the public mirrors of hicann/ops-nn and ops-math are not on this machine")
    package = _references.scaffold(references, tmp_path, namespace="nff")
    run = _check(opsdk_cli, package)
    cells = {c["op"].removeprefix("nff::"): c for c in run.cells(column="ascendc")}
    assert set(cells) == {r.name for r in references}, sorted(cells)
    failed = {op: c["message"] for op, c in cells.items() if c["status"] != "pass"}
    assert failed == {}, failed


FOREACH_ADD_LIST = _references.Reference(
    "ForeachAddList",
    "ops-nn",
    "foreach/foreach_add_list",
    "return [a + alpha * b for a, b in zip(x1, x2)]",
    ("Support([F32(5, 7), F32(100)], [F32(5, 7), F32(100)], F32(1))",),
    shared=("foreach/foreach_utils",),
)


@pytest.mark.slow
def test_a_tensor_list_op_runs_its_kernel_on_each_tensor_of_its_lists(opsdk_cli, tmp_path):
    """ForeachAddList's ``Tensor[]`` arguments and return: each tensor an instance of the
    dynamic input or output for its tiling, a member of its kernel's tensor list. Its
    outputs are the reference's; against a wrong reference the cell fails in ``kernel``
    naming the list's first tensor."""
    if not _references.available([FOREACH_ADD_LIST]):
        pytest.skip("the public mirror of hicann/ops-nn is not on this machine (CI)")
    package = _references.scaffold([FOREACH_ADD_LIST], tmp_path, namespace="lists")
    [cell] = _check(opsdk_cli, package).cells(column="ascendc")
    assert cell["status"] == "pass", cell
    kernels = _references.folder_of(package, FOREACH_ADD_LIST.name) / "kernels.py"
    kernels.write_text(kernels.read_text().replace("a + alpha * b", "a + 2 * alpha * b"))
    [cell] = _check(opsdk_cli, package).cells(column="ascendc")
    assert (cell["status"], cell["layer"]) == ("fail", "kernel"), cell
    said = cell["message"]
    assert re.search(r"the kernel's output y\[0\]: \d+ of 35 elements differ, the worst at", said)
    assert "inputs x1 [float32[5, 7], float32[100]], x2 [float32[5, 7], float32[100]]" in said
