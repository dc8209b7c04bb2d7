"""An AscendC op's own TilingFunc, compiled against opsdk's stand-ins and run in a worker:
the planted project (``tiling_project``: ops-nn style, one defect per finding class and a
correct twin) is caught with the case and the source line, the correct twin passes on the
same cases; real tiling files from the public mirrors (skipped without them) run as CANN
would run them, and SoftmaxV2's ``dimarr[-1]`` read for dim = -1 is found. One library
per project, shared by the module."""

import struct
from pathlib import Path

import mirrors
import pytest

from opsdk import cann
from opsdk.cann import tiling, ut_cases
from opsdk.cann.infer import Given

PROJECT = Path(__file__).parent / "tiling_project"
SOURCE = PROJECT / "op_host" / "row_scale_tiling.cpp"
FP16, FP32 = 1, 0  # GE's dtype numbers


def line_of(text: str, path: Path = SOURCE) -> int:
    """The line of ``path`` holding ``text`` (the planted defect's line)."""
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def planted():
    found = tiling.find_all(PROJECT)
    library = tiling.TilingLibrary(tiling.build(found["RowScale"], PROJECT).library, PROJECT)
    yield found, library
    library.close()


def rows(count: int, cols: int, limit=None, dtype=FP16) -> tiling.Case:
    x = Given(dtype, (count, cols))
    return tiling.Case(((x,),), (x,), (2.0,), core_limit=limit)


def test_the_correct_tiling_runs_clean_and_reports_its_data_layout_and_template_key(planted):
    found, library = planted
    run = library.run(found["RowScale"], rows(100, 8000))
    assert run.ok and run.status == 0
    assert run.block_dim == 48  # min(rows, the 910B's 48 vector cores)
    assert run.template_args == (("schMode", 1), ("isHalf", 1))
    assert run.tiling_key == 1 | 1 << 2  # schMode in 2 bits, then isHalf
    assert run.workspace_sizes == (1024 * 1024 + 100 * 4,)
    layout = run.layout
    assert layout.struct == "RowScaleTilingData" and layout.size == 40 == run.data_size
    offsets = {f.name: (f.ctype, f.count, f.offset) for f in layout.fields}
    assert offsets["rowsPerCore"] == ("uint64_t", 1, 8)
    assert offsets["chunks"] == ("uint16_t", 3, 16) and offsets["scale"] == ("float", 1, 24)
    tail = layout.fields[-1].nested
    assert (layout.fields[-1].offset, tail.struct, tail.size) == (28, "RowScaleTail", 8)
    # the other classes RowScale registers per key, each once, for the kernel's branches
    assert [one.struct for one in run.layouts] == ["RowScaleTilingData", "RowScaleWideTilingData"]
    rows_, cols, per_core = struct.unpack_from("<IIQ", run.data)
    assert (rows_, cols, per_core) == (100, 8000, 3)
    assert struct.unpack_from("<f", run.data, 24)[0] == 2.0


def test_a_tiling_written_as_opbase_s_class_frame_runs_its_steps(planted):
    """Ops::Base::TilingBaseClass (ops-math's circular_pad, lin_space...): DoTiling runs
    the class's steps and sets its key. Its DoLibApiTiling fails unless opbase's fp16_t
    rounds 1/3 to the nearest half and IsFloatEqual tells the two apart; its file's own
    FLT_EPSILON and Shape2String compile beside the stand-ins'."""
    found, library = planted
    run = library.run(found["RowScaleClass"], rows(100, 8000))
    assert run.ok and (run.tiling_key, run.block_dim) == (7, 48)
    assert struct.unpack_from("<I", run.data)[0] == 100


def test_under_a_core_limit_the_tiling_sees_the_limited_count(planted):
    found, library = planted
    assert library.run(found["RowScale"], rows(20, 64, limit=(4, 8))).block_dim == 8
    unlimited = library.run(found["RowScaleAllRows"], rows(20, 64))
    assert unlimited.ok and unlimited.block_dim == 20
    limited = library.run(found["RowScaleAllRows"], rows(20, 64, limit=(4, 8)))
    (finding,) = limited.findings
    assert finding.kind == "block_dim" and "above the 8 vector cores" in finding.message


@pytest.mark.parametrize(
    "op, case, kind, said, line",
    [
        ("RowScaleCrash", rows(3, 100), "crash", "FPE in Tile", "rows / (rows / info->cores)"),
        ("RowScaleRefuse", rows(4, 8000), "failed", "cols 8000 do not fit UB", "OP_LOGE"),
        ("RowScaleAllRows", rows(64, 64), "block_dim", "block dim 64 above the 48", "SetBlockDim"),
        ("RowScaleLong", rows(4, 64), "data_overflow", "longer than", "SetDataSize(STALE"),
    ],
)
def test_each_planted_defect_is_found_with_its_case_and_line_and_the_twin_passes(
    planted, op, case, kind, said, line
):
    found, library = planted
    (finding,) = library.run(found[op], case).findings
    assert finding.kind == kind and said in finding.message
    shape = list(case.inputs[0][0].shape)
    assert finding.case == str(case) == f"inputs {shape}, attrs [2.0] on ascend910b"
    assert finding.where == f"{SOURCE}:{line_of(line)}"
    assert library.run(found["RowScale"], case).ok


def test_a_crash_leaves_the_library_serving_the_next_case(planted):
    found, library = planted
    assert library.run(found["RowScaleCrash"], rows(3, 100)).status is None
    assert library.run(found["RowScaleCrash"], rows(100, 100)).ok


def test_workspace_for_updatable_is_the_largest_a_case_asks(planted):
    found, library = planted
    runs = [library.run(found["RowScale"], rows(n, 64)) for n in (4, 400)]
    assert tiling.workspace_size(runs) == 1024 * 1024 + 400 * 4


def test_an_updatable_from_cann_op_s_workspace_is_what_its_own_tiling_asks(opsdk_cli, tmp_path):
    source = Path(__file__).parent / "tiling_updatable" / "op_host" / "row_repeat_def.cpp"
    run = opsdk_cli("new", "--from-cann", source, "--namespace", "e2e_tws", "--updatable", "k")
    assert run.code == 0, run.stderr
    specs = (tmp_path / "row_repeat" / "row_repeat" / "specs.py").read_text()
    assert "Support(F32(2, 3), Fixed(1))" in specs  # 6 elements of 4 bytes, k = 1
    # then the op's own tiling tests' cases, the smallest first (tests/ut/op_host)
    lines = [line.strip() for line in specs.splitlines()]
    at = lines.index("# the op's own test test_row_repeat_tiling.cpp:19 row_repeat_fp32_small")
    assert lines[at + 1 : at + 4] == [
        "Support(F32(4, 40), Fixed(2)),",
        "# the op's own test test_row_repeat_tiling.cpp:9 row_repeat_fp16_wide",
        "Support(F16(8, 1000), Fixed(3)),",
    ]
    updatable = (tmp_path / "row_repeat" / "row_repeat" / "updatable.py").read_text()
    assert "WORKSPACE_BYTES = 4120\n" in updatable  # the tiling's 4096 + 6 * 4 * k


# Real tiling files, copied out of the public mirrors (per repository: the folders needed).
REAL = {
    "ops-nn": ("common", "norm/rms_norm", "norm/deep_norm", "experimental/activation/softmax_v2"),
    "ops-math": ("experimental/math/add_v2",),
}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("real_tiling")
    for name, folders in REAL.items():
        repo = mirrors.MIRRORS / f"hicann+{name}" / "repo"
        if not repo.is_dir():
            pytest.skip(f"the public mirror of hicann/{name} is not on this machine (CI)")
        mirrors.archive(repo, root / name, *folders)
    return root


def run_real(real, repo: str, folder: str, op_type: str, case: tiling.Case) -> tiling.TilingRun:
    source = tiling.find(op_type, real / repo / folder)
    library = tiling.TilingLibrary(tiling.build(source, real / repo).library, real / repo)
    try:
        return library.run(source, case)
    finally:
        library.close()


def test_production_rms_norm_tiles_as_its_kernel_expects(real):
    x, gamma = Given(FP16, (64, 4096)), Given(FP16, (4096,))
    case = tiling.Case(((x,), (gamma,)), (x, Given(FP32, (64, 1))), (1e-6,))
    run = run_real(real, "ops-nn", "norm/rms_norm/op_host", "RmsNorm", case)
    assert run.ok and run.block_dim == 32 and run.layout.struct == "RMSNormTilingData"
    assert struct.unpack_from("<QQ", run.data) == (64, 4096)  # num_row, num_col
    assert run.workspace >= 16 << 20  # the AscendC library's workspace and its own


def test_experimental_add_v2_tiles_into_its_plain_struct_with_a_template_key(real):
    x = Given(FP32, (1000,))
    case = tiling.Case(((x,), (x,)), (x,))
    run = run_real(real, "ops-math", "experimental/math/add_v2/op_host", "AddV2", case)
    assert run.ok and run.layout is None and run.data_size == 8 * 8  # eight int64 fields
    assert [name for name, _ in run.template_args] == ["schMode"]


def test_experimental_softmax_v2_reads_dimarr_minus_one_for_the_last_dim(real):
    x = Given(FP32, (4, 64))
    folder = "experimental/activation/softmax_v2/op_host"
    last_dim = tiling.Case(((x,),), (x,), (-1,))
    (finding,) = run_real(real, "ops-nn", folder, "SoftmaxV2", last_dim).findings
    assert finding.kind == "crash" and "stack-buffer-overflow" in finding.message
    path, line = finding.where.rsplit(":", 1)
    assert "dimarr[dim]" in Path(path).read_text().splitlines()[int(line) - 1]
    assert run_real(real, "ops-nn", folder, "SoftmaxV2", tiling.Case(((x,),), (x,), (0,))).ok


def test_deep_norm_tiles_its_own_test_s_case_not_one_made_of_its_definition_alone(real):
    """Its gamma and beta are x's last dim: a relation its definition does not state,
    its own host tiling test (``tests/ut/op_host/arch22/``) does."""
    folder = real / "ops-nn" / "norm/deep_norm"
    (op,) = cann.read(folder / "op_graph/deep_norm_proto.h", ["DeepNorm"])
    own = ut_cases.cases(op, folder)[0]
    assert [g.shape for (g,) in own.inputs] == [(24, 1, 2560), (24, 1, 2560), (2560,), (2560,)]
    run = run_real(real, "ops-nn", "norm/deep_norm/op_host", "DeepNorm", own)
    assert run.ok and run.block_dim == 24, run.findings
    x = own.inputs[0]
    alike = tiling.Case((x, x, x, x), own.outputs, own.attrs)  # every input x's shape
    (refused,) = run_real(real, "ops-nn", "norm/deep_norm/op_host", "DeepNorm", alike).findings
    assert "Input shape dim invalid" in refused.message
