"""An AscendC op's vector kernel compiled for the CPU and run with every block a thread
(opsdk.cann.kernel): planted projects with one defect of each class and their correct
twin, caught with block, case and line; public kernels from the mirrors (skipped without
them): ops-math's AddV2 (its tail defect) and ops-nn's production RmsNorm (no finding,
torch's numbers). Each library is compiled once per module."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kernel_twin import PROJECTS, Field, TilingLayout, TilingRun, extract, layout_of, pack  # noqa: E402

from opsdk.cann import kernel  # noqa: E402

PLANTED = PROJECTS / "planted" / "op_kernel"
# planted_tiling.h's PlantedDefect
NONE, TAIL, UB, WORKSPACE, OVERLAP, LEAK, DOUBLE_FREE, LAST_ELEMENT, WILD = range(9)


@pytest.fixture(scope="module")
def planted():
    built = kernel.build(kernel.entry_of(PLANTED / "planted.cpp"), root=PLANTED.parent)
    compiled = kernel.Kernel(built)
    yield compiled
    compiled.close()


def round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def run_planted(planted, total: int, cores: int, defect: int, tile: int = 64, y=True):
    """z = x + y over ``total`` float32 on ``cores`` cores, ``defect`` planted (y=False:
    y an absent input)."""
    per_core = round_up(-(-total // cores), 8)
    x, y_ = torch.rand(total), torch.rand(total)
    tiling = TilingRun(struct.pack("<4I", total, per_core, tile, defect), cores, 0, (total * 4,))
    launch = planted.launch(
        {"x": x.numpy().tobytes(), "y": y_.numpy().tobytes() if y else None},
        {"z": total * 4},
        tiling,
        case=f"{total}x{cores}",
    )
    z = (
        torch.frombuffer(bytearray(launch.outputs["z"]), dtype=torch.float32)
        if launch.outputs
        else None
    )
    return launch, z, x + y_


def line_of(statement: str, last: bool = False) -> int:
    lines = (PLANTED / "planted.h").read_text().splitlines()
    found = [i + 1 for i, text in enumerate(lines) if statement in text]
    return found[-1] if last else found[0]


@pytest.mark.parametrize("total, cores", [(1001, 4), (4096, 8), (100_000, 2)])
def test_the_correct_twin_is_exact_and_clean(planted, total, cores):
    launch, z, expected = run_planted(
        planted, total, cores, NONE, tile=1024 if total > 10_000 else 64
    )
    assert launch.findings == ()
    assert torch.equal(z, expected)


DEFECTS = [
    # defect, case (total, cores, tile), kind, the statement's line, the blocks it is in
    (TAIL, (1001, 4, 64), "gm-out-of-bounds", ("DataCopy(zGm[i * tile], acc, (n + 7) / 8 * 8);", False), {3}),
    (UB, (100_000, 2, 1024), "ub-overflow", ("pipe.InitBuffer(tmp, tmpElements", False), {0, 1}),
    (WORKSPACE, (1001, 4, 64), "workspace-read-unwritten", ("DataCopyPad(acc, wsGm[i * tile], params, pad);", False), {0, 1, 2, 3}),
    (OVERLAP, (1001, 4, 64), "gm-write-race", ("DataCopyPad(zGm[i * tile], acc, params);", False), {0, 1, 2, 3}),
    (LEAK, (1001, 4, 64), "queue-misuse", ("LocalTensor<float> x = inX.AllocTensor<float>();", False), {0, 1, 2, 3}),
    (DOUBLE_FREE, (1001, 4, 64), "queue-misuse", ("outZ.FreeTensor(z);", True), {0, 1, 2, 3}),
]  # fmt: skip


@pytest.mark.parametrize("defect, case, kind, statement, blocks", DEFECTS)
def test_a_planted_defect_is_caught_with_its_block_case_and_line(
    planted, defect, case, kind, statement, blocks
):
    total, cores, tile = case
    launch, _, _ = run_planted(planted, total, cores, defect, tile)
    at = ("op_kernel/planted.h", line_of(*statement))
    found = [f for f in launch.findings if f.kind == kind and (f.file, f.line) == at]
    assert found, [str(f) for f in launch.findings]
    assert found[0].block in blocks and found[0].case == f"{total}x{cores}", str(found[0])


def test_the_tail_finding_says_how_far_past_the_end(planted):
    """The DataCopy of 48 floats for the last 41 writes 28 B past z's 4004 B; the numbers
    inside z are still right (the hardware too writes them)."""
    launch, z, expected = run_planted(planted, 1001, 4, TAIL)
    assert [f.what for f in launch.findings] == [
        "GM write of 192 B at offset 3840 of z (4004 B): 28 B past its end"
    ]
    assert torch.equal(z, expected)


def test_a_wrong_number_shows_against_the_reference(planted):
    """Each core's tail one element short: no hardware limit is crossed, each core's last
    element is the poison the output was filled with."""
    launch, z, expected = run_planted(planted, 1001, 4, LAST_ELEMENT)
    assert launch.findings == ()
    wrong = (z != expected).nonzero().flatten().tolist()
    assert wrong == [255, 511, 767, 1000] and torch.isnan(z[wrong]).all()


def test_a_crash_is_a_finding_and_the_next_launch_runs(planted):
    launch, _, _ = run_planted(planted, 1001, 4, WILD)
    assert [f.kind for f in launch.findings] == ["crash"]
    assert "SIGSEGV" in launch.findings[0].what
    assert run_planted(planted, 1001, 4, NONE)[0].findings == ()


def test_reading_an_absent_input_is_a_finding(planted):
    launch, _, _ = run_planted(planted, 1001, 4, NONE, y=False)
    assert {f.kind for f in launch.findings} == {"gm-out-of-bounds"}
    assert "outside every GM buffer" in launch.findings[0].what


# ---------------------------------------------------------------- generated tiling struct, template key
SCALE = PROJECTS / "scale" / "op_kernel"
SPLIT = TilingLayout("ScaleSplit", (Field("perCore", "uint32_t", 1, 0),), 8)
SCALE_LAYOUT = TilingLayout(
    "ScaleTilingData",
    (
        Field("total", "uint32_t", 1, 0),
        Field("scale", "float", 1, 4),
        Field("split", "", 1, 8, SPLIT),
    ),
    16,
)


@pytest.fixture(scope="module")
def scale():
    """The scale op's instance for tiling key 1: its level-0 mask/repeat form."""
    entry = kernel.entry_of(SCALE / "scale.cpp")
    compiled = kernel.Kernel(kernel.build(entry, tiling_key=1, layout=SCALE_LAYOUT))
    yield compiled
    compiled.close()


@pytest.mark.parametrize("total, cores", [(1000, 3), (64 * 300, 2)])
def test_a_generated_tiling_struct_and_a_template_key_run_bit_exact(scale, total, cores):
    """float16 through float32 and back, rounded to nearest even as the vector unit
    stores it: torch's numbers to the bit, whole repeats and a tail under a mask."""
    per_core = round_up(-(-total // cores), 64)
    x = torch.randn(total, dtype=torch.float16)
    tiling = TilingRun(struct.pack("<IfI4x", total, 0.37, per_core), cores, 1, (0,))
    launch = scale.launch({"x": x.numpy().tobytes()}, {"y": total * 2}, tiling)
    y = torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float16)
    assert launch.findings == ()
    assert torch.equal(y, (x.float() * 0.37).half())
