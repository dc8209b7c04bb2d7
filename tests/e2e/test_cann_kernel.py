"""An AscendC op's vector kernel compiled for the CPU and run with every block a thread
(opsdk.cann.kernel): planted projects with one defect of each class and their correct
twin, caught with block, case and line; public kernels from the mirrors (skipped without
them): ops-math's AddV2 (its tail defect) and ops-nn's production RmsNorm (no finding,
torch's numbers). Each library is compiled once per module."""

from __future__ import annotations

import struct

import pytest
import torch
from kernel_twin import PROJECTS, SCALE_LAYOUT, TilingRun, extract, layout_of, pack

from opsdk.cann import kernel

PLANTED = PROJECTS / "planted" / "op_kernel"
# planted_tiling.h's PlantedDefect
NONE, TAIL, UB, WORKSPACE, OVERLAP, LEAK, DOUBLE_FREE, LAST_ELEMENT, WILD = range(9)
HANDOFF_SYNCED, HANDOFF_RACE, SYNC_ONE_BLOCK, RAW_PAST_END, SAME_VALUES, DEQUE_AGAIN = range(9, 15)
TAIL_READ_BLOCKS, ADD_INTO_Z = 15, 16


@pytest.fixture(scope="module")
def planted():
    built = kernel.build(kernel.entry_of(PLANTED / "planted.cpp"), root=PLANTED.parent)
    compiled = kernel.Kernel(built)
    yield compiled
    compiled.close()


def round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def run_planted(planted, total: int, cores: int, defect: int, tile: int = 64, y=True, z=None):
    """z = x + y over ``total`` float32 on ``cores`` cores, ``defect`` planted (y=False:
    y an absent input; z: what the launch takes for z, its size by default)."""
    per_core = round_up(-(-total // cores), 8)
    x, y_ = torch.rand(total), torch.rand(total)
    tiling = TilingRun(struct.pack("<4I", total, per_core, tile, defect), cores, 0, (total * 4,))
    launch = planted.launch(
        {"x": x.numpy().tobytes(), "y": y_.numpy().tobytes() if y else None},
        {"z": total * 4 if z is None else z},
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


EVERY = {0, 1, 2, 3}
TAIL_COPY = "DataCopy(zGm[i * tile], acc, (n + 7) / 8 * 8);"
WS_READ = "DataCopyPad(acc, wsGm[i * tile], params, pad);"
Z_WRITE = "DataCopyPad(zGm[i * tile], acc, params);"
HANDOFF_WRITE = "DataCopyPad(zAll[perCore], acc, params);"
DEFECTS = [
    # defect, case (total, cores, tile), kind, (statement, its last occurrence), blocks
    (TAIL, (1001, 4, 64), "gm-out-of-bounds", (TAIL_COPY, False), {3}),
    (UB, (100_000, 2, 1024), "ub-overflow", ("pipe.InitBuffer(tmp, tmpElements", False), {0, 1}),
    (WORKSPACE, (1001, 4, 64), "workspace-read-unwritten", (WS_READ, False), EVERY),
    (OVERLAP, (1001, 4, 64), "gm-write-race", (Z_WRITE, False), EVERY),
    (LEAK, (1001, 4, 64), "queue-misuse", ("x = inX.AllocTensor<float>();", False), EVERY),
    (DOUBLE_FREE, (1001, 4, 64), "queue-misuse", ("outZ.FreeTensor(z);", True), EVERY),
]


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


def test_writes_ordered_by_sync_all_are_no_race(planted):
    """Block 0 rewrites block 1's first outputs after a SyncAll every block reaches: the
    blocks wait for each other, and the writes are ordered (HANDOFF_RACE, the same
    without the SyncAll, is a race above)."""
    launch, z, expected = run_planted(planted, 1001, 4, HANDOFF_SYNCED)
    assert launch.findings == ()
    assert torch.equal(z, expected)


def test_two_cores_writing_the_same_values_is_no_race(planted):
    """Each core also writes its neighbour's first 8 sums, as the neighbour does (as
    GroupNormSwish's blocks overrun into the next block's groups): one result in either
    order (OVERLAPPING_CORES, other values over the neighbour's, is a race above)."""
    launch, z, expected = run_planted(planted, 1001, 4, SAME_VALUES)
    assert launch.findings == ()
    assert torch.equal(z, expected)


def test_a_second_deque_of_one_enqueue_is_misuse_and_the_block_goes_on(planted):
    """AscendC's CPU debug mode asserts at it; the NPU neither waits nor stops there but
    hands back the buffer again: a finding at its line, and z is right, as on the NPU."""
    launch, z, expected = run_planted(planted, 1001, 4, DEQUE_AGAIN)
    [misuse] = launch.findings
    assert misuse.kind == "queue-misuse" and misuse.line == line_of("y = inY.DeQue<float>();", True)
    assert "nothing enqueued since the last DeQue" in misuse.what
    assert torch.equal(z, expected)


def test_the_same_writes_without_the_sync_all_race(planted):
    """Whichever of the two writes comes second (the threads' order) is the line named."""
    launch, _, _ = run_planted(planted, 1001, 4, HANDOFF_RACE)
    assert [f.kind for f in launch.findings] == ["gm-write-race"]
    race = launch.findings[0]
    assert race.line in (line_of(HANDOFF_WRITE), line_of(Z_WRITE)) and race.block in (0, 1)
    assert race.what.startswith("blocks 0 and 1 both write bytes [1024, 1056) of z") or (
        race.what.startswith("blocks 1 and 0 both write bytes [1024, 1056) of z")
    )


def test_a_sync_all_one_block_alone_reaches_would_hang(planted):
    """Whichever comes first, the waiting block or the others' end, it is the hang."""
    launch, _, _ = run_planted(planted, 1001, 4, SYNC_ONE_BLOCK)
    assert [f.kind for f in launch.findings] == ["sync-hang"]
    what = launch.findings[0].what
    assert "ended while 1 blocks wait at SyncAll" in what or "blocks ended: the hardware" in what


def test_the_tail_finding_says_how_far_past_the_end(planted):
    """The DataCopy of 48 floats for the last 41 writes 28 B past z's 4004 B; the numbers
    inside z are still right (the hardware too writes them)."""
    launch, z, expected = run_planted(planted, 1001, 4, TAIL)
    assert [f.what for f in launch.findings] == [
        "GM write of 192 B at offset 3840 of z (4004 B): 28 B past its end"
    ]
    assert torch.equal(z, expected)


def test_a_tail_read_in_whole_blocks_within_the_allocation_is_no_finding(planted):
    """x's last 41 floats read as 48 (28 B past its 4004 B): Ascend allocates a tensor
    its size rounded up to 32 B and 32 B more, so the read stays in it and, unused,
    changes nothing (the same rounding on a write is TAIL's finding)."""
    launch, z, expected = run_planted(planted, 1001, 4, TAIL_READ_BLOCKS)
    assert launch.findings == ()
    assert torch.equal(z, expected)


def test_an_output_the_runtime_fills_starts_filled(planted):
    """The sums added into z atomically: right where z starts at 0, as OpDef's
    ``.InitValue(0)`` has the runtime fill it (HistogramV2's y); on poison, wrong."""
    zeros = kernel.Filled(1001 * 4, bytes(4))
    launch, z, expected = run_planted(planted, 1001, 4, ADD_INTO_Z, z=zeros)
    assert launch.findings == () and torch.equal(z, expected)
    _, z, expected = run_planted(planted, 1001, 4, ADD_INTO_Z)
    assert not torch.equal(z, expected)


def test_a_wrong_number_shows_against_the_reference(planted):
    """Each core's tail one element short: no hardware limit is crossed, each core's last
    element is the poison the output was filled with."""
    launch, z, expected = run_planted(planted, 1001, 4, LAST_ELEMENT)
    assert launch.findings == ()
    wrong = (z != expected).nonzero().flatten().tolist()
    assert wrong == [255, 511, 767, 1000] and torch.isnan(z[wrong]).all()


def test_a_launch_sees_none_of_the_bytes_the_last_one_left(planted):
    """The worker keeps its GM and UB memory from launch to launch: after a launch that
    wrote every output and workspace byte, a read of workspace before writing it is still
    the finding and reads poison, and an element left unwritten is still poison."""
    assert run_planted(planted, 1001, 4, NONE)[0].findings == ()
    launch, z, _ = run_planted(planted, 1001, 4, WORKSPACE)
    assert {f.kind for f in launch.findings} == {"workspace-read-unwritten"}
    assert torch.isnan(z).all()  # z = x + y + the workspace's poison
    run_planted(planted, 1001, 4, NONE)
    _, z, expected = run_planted(planted, 1001, 4, LAST_ELEMENT)
    assert torch.isnan(z[[255, 511, 767, 1000]]).all() and torch.equal(z[:255], expected[:255])


def test_a_write_past_the_end_through_a_raw_pointer_shows_in_the_guard_zone(planted):
    """No API call sees it: the guard zone after z, checked after the launch, does (no
    block's, no line); the worker's kept memory has its guard zones set again, so the
    next launch is clean."""
    launch, z, expected = run_planted(planted, 1001, 4, RAW_PAST_END)
    assert [(f.kind, f.block, f.line) for f in launch.findings] == [("gm-out-of-bounds", -1, 0)]
    assert (
        launch.findings[0].what
        == "the guard zone after z was written (a write through a raw pointer)"
    )
    assert torch.equal(z, expected)
    assert run_planted(planted, 1001, 4, NONE)[0].findings == ()


def test_a_crash_is_a_finding_and_the_next_launch_runs(planted):
    launch, _, _ = run_planted(planted, 1001, 4, WILD)
    assert [f.kind for f in launch.findings] == ["crash"]
    assert "SIGSEGV" in launch.findings[0].what
    assert run_planted(planted, 1001, 4, NONE)[0].findings == ()


def test_reading_an_absent_input_is_a_finding(planted):
    launch, _, _ = run_planted(planted, 1001, 4, NONE, y=False)
    assert {f.kind for f in launch.findings} == {"gm-out-of-bounds"}
    assert "outside every GM buffer" in launch.findings[0].what


# ------------------------------------------------ a generated tiling struct, a template key
SCALE = PROJECTS / "scale" / "op_kernel"


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


# ---------------------------------------------------------------- public kernels (mirrors)
def elementwise_tiling(n, itemsize, cores, tile_blocks, key, workspace):
    """What ops-math AddV2's and ops-nn Gelu's TilingFuncs compute (add_v2_tiling.cpp,
    gelu_tiling.cpp): the input in 32 B blocks over ``cores`` cores, the first ``tail``
    cores one block more, tiles of ``tile_blocks`` blocks."""
    tile = tile_blocks * 32 // itemsize
    every, tail = divmod(-(-n * itemsize // 32), cores)

    def share(core_blocks: int):
        data = core_blocks * 32 // itemsize
        tiles = core_blocks // tile_blocks
        rest = data - tile * tiles
        return data, tiles + (core_blocks % tile_blocks != 0), rest if rest > 0 else tile

    small, small_tiles, small_tail = share(every)
    big, big_tiles, big_tail = share(every + 1)
    data = struct.pack("<8q", small, big, big_tiles, small_tiles, tile, small_tail, big_tail, tail)
    return TilingRun(data, cores, key, (workspace,))


def add_v2_tiling(n: int, cores: int = 48, ub: int = 196_608):
    """AddV2's for float32: a core per 32 B block up to ``cores``, tiles of a third of
    half the UB, a 16 MB system workspace."""
    used = max(min(cores, -(-n * 4 // 32)), 1)
    return elementwise_tiling(n, 4, used, ub // 32 // 2 // 3, 0, 16 << 20)


def gelu_tiling(n: int, cores: int = 48, ub: int = 196_608):
    """Gelu's for float32: a core per 1,024 elements up to ``cores``, tiles of a twelfth
    of the UB (a multiple of 16 blocks), no workspace."""
    used = min(cores, -(-n // 1024))
    return elementwise_tiling(n, 4, used, ub // 32 // 12 // 16 * 16, 0, 0)


@pytest.fixture(scope="module")
def add_v2(tmp_path_factory):
    root = extract(tmp_path_factory, "ops-math", "experimental/math/add_v2")
    source = root / "experimental/math/add_v2/op_kernel/add_v2.cpp"
    compiled = kernel.Kernel(kernel.build(kernel.entry_of(source), tiling_key=0, root=root))
    yield compiled
    compiled.close()


def run_add_v2(add_v2, n: int):
    x, y = torch.randn(n), torch.randn(n)
    inputs = {"x": x.numpy().tobytes(), "y": y.numpy().tobytes()}
    launch = add_v2.launch(inputs, {"z": n * 4}, add_v2_tiling(n), case=f"[{n}] float32")
    return launch, torch.frombuffer(bytearray(launch.outputs["z"]), dtype=torch.float32), x + y


@pytest.mark.parametrize("n", [8 * 48, 4096 * 48 + 64])
def test_add_v2_is_bit_exact_and_clean_at_aligned_sizes(add_v2, n):
    launch, z, expected = run_add_v2(add_v2, n)
    assert launch.findings == ()
    assert torch.equal(z, expected)


@pytest.mark.parametrize("n", [1003, 4096 * 48 + 5])
def test_add_v2_writes_past_its_output_at_unaligned_sizes(add_v2, n):
    """Its tiling hands the last core a whole 32 B block and the kernel moves it with
    DataCopy: up to 30 B past x, y (reads) and z (the write), named at add_v2.h."""
    launch, z, expected = run_add_v2(add_v2, n)
    write = [f for f in launch.findings if "GM write" in f.what]
    assert len(write) == 1 and write[0].kind == "gm-out-of-bounds", launch.findings
    past = 32 - n * 4 % 32
    assert f"{past} B past its end" in write[0].what and write[0].file.endswith("add_v2.h")
    assert write[0].block == add_v2_tiling(n).block_dim - 1
    assert torch.equal(z, expected)  # the numbers inside z are right


@pytest.fixture(scope="module")
def gelu(tmp_path_factory):
    root = extract(tmp_path_factory, "ops-nn", "experimental/activation/gelu")
    source = root / "experimental/activation/gelu/op_kernel/gelu.cpp"
    dtypes = {"x": "float32", "y": "float32"}
    compiled = kernel.Kernel(kernel.build(kernel.entry_of(source), dtypes, root=root))
    yield compiled
    compiled.close()


@pytest.mark.parametrize("n, past", [(4096, 0), (3000, 0), (1003, 20)])
def test_gelu_matches_its_formula_and_writes_past_its_output_at_unaligned_sizes(gelu, n, past):
    """ops-nn's experimental Gelu (x / (1 + exp(-1.5958 (x + 0.0455 x^3)))) has AddV2's
    tail: DataCopy of a whole 32 B block on the last core."""
    x = torch.randn(n)
    launch = gelu.launch({"x": x.numpy().tobytes()}, {"y": n * 4}, gelu_tiling(n))
    y = torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float32)
    expected = x / (1 + torch.exp(-1.595769122 * (x + 0.0455399241 * x**3)))
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-6)
    writes = [f.what for f in launch.findings if "GM write" in f.what]
    if past:
        assert len(writes) == 1 and writes[0].endswith(f"of y ({n * 4} B): {past} B past its end")
    else:
        assert writes == []


@pytest.fixture(scope="module")
def rms_norm_project(tmp_path_factory):
    root = extract(tmp_path_factory, "ops-nn", "norm/rms_norm")
    header = (root / "norm/rms_norm/op_host/rms_norm_tiling.h").read_text()
    return root / "norm/rms_norm", layout_of(header, "RMSNormTilingData")


def rms_norm_tiling(rows, cols, dtype, layout, epsilon=1e-6, cores=48, ub=196_608):
    """What ops-nn RmsNorm's TilingFunc computes on a 910B for x and gamma of one dtype
    (rms_norm_tiling.cpp): merge-n rows when a row fits 2,000 elements (key 2), else one
    row per pass (key 0), else the row split (key 1)."""
    per_block = 8 if dtype == torch.float32 else 16
    align = round_up(cols, per_block)
    ub_factor = 10240 if dtype == torch.float32 else 12288
    block = -(-rows // cores)
    used = -(-rows // block)
    last = rows - block * (used - 1)
    row_factor, mode = 64, 1 if align > ub_factor else 0
    if mode == 1:
        ub_factor = round_up(-(-cols // -(-cols // ub_factor)), 16)
        while cols % ub_factor and cols % ub_factor < 16:
            ub_factor -= 16
    if align <= 2000:
        mode, row_factor = 2, (ub - 1024) // (align * 16 + 260)
        ub_factor = row_factor * align
    loops, last_loops = -(-block // row_factor), -(-last // row_factor)
    values = {
        "num_row": rows, "num_col": cols, "num_col_align": align, "block_factor": block,
        "row_factor": row_factor, "ub_factor": ub_factor, "epsilon": epsilon,
        "avg_factor": 1.0 / cols, "is_nddma": 1, "last_block_factor": last,
        "row_loop": loops, "last_block_row_loop": last_loops,
        "row_tail": block - (loops - 1) * row_factor,
        "last_block_row_tail": last - (last_loops - 1) * row_factor,
        "mul_loop": align // 64, "mul_tail": align % 64, "dst_rep_stride": align // 8 & 255,
        "is_performance": int(dtype != torch.float32 and cols <= 5120 and rows <= 512),
    }  # fmt: skip
    return TilingRun(pack(layout, values), used, mode, (256 + (16 << 20),))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_production_rms_norm_matches_torch_with_no_finding(rms_norm_project, dtype):
    root, layout = rms_norm_project
    name = str(dtype).removeprefix("torch.")
    dtypes = {"x": name, "gamma": name, "y": name, "rstd": "float32"}
    entry = kernel.entry_of(root / "op_kernel/rms_norm.cpp")
    compiled = kernel.Kernel(kernel.build(entry, dtypes, layout=layout, root=root))
    keys = set()
    for rows, cols in [(7, 33), (100, 130), (3, 4000), (2, 12000)]:
        x, gamma = torch.randn(rows, cols, dtype=dtype), torch.randn(cols, dtype=dtype)
        tiling = rms_norm_tiling(rows, cols, dtype, layout)
        keys.add(tiling.tiling_key)
        inputs = {"x": x.numpy().tobytes(), "gamma": gamma.numpy().tobytes()}
        sizes = {"y": x.numel() * x.element_size(), "rstd": rows * 4}
        launch = compiled.launch(inputs, sizes, tiling, case=f"{[rows, cols]} {name}")
        assert launch.findings == (), [str(f) for f in launch.findings]
        y = torch.frombuffer(bytearray(launch.outputs["y"]), dtype=dtype).reshape(rows, cols)
        rstd = torch.frombuffer(bytearray(launch.outputs["rstd"]), dtype=torch.float32)
        expected_rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
        expected = (x.float() * expected_rstd[:, None] * gamma.float()).to(dtype)
        tolerance = 1e-5 if dtype == torch.float32 else 2e-3
        torch.testing.assert_close(rstd, expected_rstd, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(y, expected, rtol=tolerance, atol=tolerance)
    compiled.close()
    assert keys == ({0, 1, 2} if dtype == torch.float32 else {0, 2})  # every mode ran
