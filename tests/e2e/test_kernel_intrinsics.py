"""The arithmetic of opsdk's AscendC stand-in instructions against torch: each run by
the intrinsics project's kernel (one library for the module), float32 over one repeat.
The instructions passed as function pointers (ops-nn's foreach kernels' way) compute what
their calls compute; the advanced math computes in float32 (the op's tolerance, not
bit-exactness, as on the NPU)."""

from __future__ import annotations

import struct

import pytest
import torch
from kernel_twin import PROJECTS, TilingRun

from opsdk.cann import kernel

INTRINSICS = PROJECTS / "intrinsics" / "op_kernel"
N = 45  # a partial repeat: the count forms and the mask both cut short


@pytest.fixture(scope="module")
def intrinsics():
    compiled = kernel.Kernel(kernel.build(kernel.entry_of(INTRINSICS / "intrinsics.cpp")))
    yield compiled
    compiled.close()


def run(intrinsics, which: int, x: torch.Tensor) -> torch.Tensor:
    tiling = TilingRun(struct.pack("<2I", len(x), which), 1, 0, (0,))
    launch = intrinsics.launch({"x": x.numpy().tobytes()}, {"y": len(x) * 4}, tiling)
    assert launch.findings == ()
    return torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float32)


@pytest.mark.parametrize(
    "which, expected",
    [
        (0, torch.exp),
        (1, lambda x: x * x),
        (2, lambda x: x - x),
        (3, lambda x: x + 0.5),
        (4, torch.acos),
        (10, torch.log10),
        (11, torch.tan),
        (12, torch.asin),
        (13, torch.atan),
        (14, torch.sinh),
        (15, torch.cosh),
        (16, torch.special.erfc),
        (17, lambda x: torch.pow(2.0, x)),
        (18, lambda x: x.sum().expand(len(x))),
    ],
    ids=[
        "exp*",
        "mul*",
        "sub-level0*",
        "adds*",
        "acos*",
        "log10",
        "tan",
        "asin",
        "atan",
        "sinh",
        "cosh",
        "erfc",
        "power-scalar-base",
        "getaccval",
    ],  # fmt: skip
)
def test_an_instruction_computes_what_torch_does(intrinsics, which, expected):
    """``*``: passed as a template argument of a function pointer type."""
    x = torch.rand(N) * 0.98 + 0.01  # inside every function's domain
    assert torch.allclose(run(intrinsics, which, x), expected(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "which, dtype, expected",
    [
        (20, torch.float32, lambda x: x.view(16, 8).t()),
        (21, torch.int16, lambda x: x.view(16, 16).t()),
        (22, torch.int16, lambda x: x.view(16, 16).t()),
        (25, torch.int16, lambda x: x.view(16, 16).t()),
        (23, torch.int8, lambda x: x.view(16, 2, 16).permute(2, 1, 0)),
    ],
    ids=[
        "5hd-float32",
        "5hd-int16-addresses",
        "transpose-16x16",
        "5hd-impl-pointers",
        "5hd-int8-halves",
    ],
)
def test_a_transposition_moves_each_element_where_the_doc_says(intrinsics, which, dtype, expected):
    """TransDataTo5HD's 16 source blocks to 16 destination blocks, for 32-, 16- and 8-bit
    elements (both halves of the 8-bit blocks), and Transpose's 16 x 16: 512 B each."""
    x = torch.randint(0, 2**30, (128,), dtype=torch.int32).view(torch.float32)  # no NaN
    y = run(intrinsics, which, x).view(dtype)
    assert torch.equal(y, expected(x.view(dtype)).reshape(-1))


def test_opbase_kernel_helpers_round_as_named_and_a_tbuf_allocates_its_buffer(intrinsics):
    y = run(intrinsics, 24, torch.zeros(8))
    assert y[:7].tolist() == [32768, 8, 3, 4, 32, 32, 1]


def _picked(x: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    return torch.where(bits, x, torch.tensor(-1.0))


@pytest.mark.parametrize(
    "which, expected",
    [
        (26, lambda x: _picked(x, x > 0.5)),
        (27, lambda x: torch.where(torch.arange(128) % 64 < 40, _picked(x, x > 0.5), 7.0)),
        (28, lambda x: _picked(x, (x[:64] > 0.5).repeat(2))),
        (29, lambda x: _picked(x, (x[:64] > 0.5).repeat(2))),
    ],
    ids=["level0-tensors", "level0-scalar-masked", "level0-cmpmask", "count-cmpmask"],
)
def test_select_takes_each_repeat_s_bits_as_its_mode_says(intrinsics, which, expected):
    """Modes 1 and 2 take the next 64 bits each repeat; mode 0 the first 64 again; what the
    mask leaves out keeps dst's value (7)."""
    x = torch.rand(128)
    assert torch.equal(run(intrinsics, which, x), expected(x))


def _sorted(scores: torch.Tensor, group: int) -> torch.Tensor:
    """Each ``group`` scores sorted descending, ties in input order: values, then indices."""
    values, indices = scores.view(-1, group).sort(descending=True, stable=True)
    indices += torch.arange(0, len(scores), group).unsqueeze(1)
    return torch.cat([values.reshape(-1), indices.reshape(-1).float()])


@pytest.mark.parametrize(
    "which, group", [(30, 64), (31, 32), (32, 32)], ids=["sort-full", "sort-each-32", "sort32"]
)
def test_sort_orders_scores_descending_and_ties_by_input_order(intrinsics, which, group):
    """Sort (all 64, or each 32) and Sort32 into (score, index) pairs, read back by Extract."""
    x = torch.randint(0, 8, (64,)).float()  # many ties
    y = run(intrinsics, which, torch.cat([x, torch.zeros(64)]))
    assert torch.equal(y, _sorted(x, group))


def test_xor_flips_the_bits_of_16_bit_elements(intrinsics):
    x = torch.randint(0, 2**30, (128,), dtype=torch.int32).view(torch.float32)
    y = run(intrinsics, 34, x).view(torch.int16)[:128]
    halves = x.view(torch.int16)
    assert torch.equal(y, halves[:128] ^ halves[128:])


def test_mrgsort_merges_two_sorted_runs_as_one_sort_would(intrinsics):
    """Sort32 sorts each 32, MrgSort merges the two runs (ties: the first run's first, so
    the whole is a stable sort), read back by Extract."""
    x = torch.randint(0, 8, (64,)).float()  # many ties, across the runs too
    y = run(intrinsics, 35, torch.cat([x, torch.zeros(64)]))
    assert torch.equal(y, _sorted(x, 64))


def test_concat_makes_its_tensor_the_scores_and_sorted_pairs_take_8_bytes(intrinsics):
    """As from the 910B on: the scores themselves, so a tensor never allocated serves
    (MoeTokenPermute's ``concatLocal``)."""
    x = torch.rand(128)
    y = run(intrinsics, 36, x)
    assert torch.equal(y[:64], x[:64])
    assert y[64:66].tolist() == [64, 32]  # GetSortLen<float>(32), GetSortOffset<half>(8)


@pytest.mark.parametrize(
    "which, expected",
    [
        (37, lambda x: _picked(x, x > 0.5)),
        (38, lambda x: _picked(x, (x[:64] > 0.5).repeat(2))),
        (39, lambda x: _picked(x, x > 0.5)),
    ],
    ids=["level0-into-a-tensor", "level0-into-the-cmpmask-register", "operator-whole-tensor"],
)
def test_the_level0_compare_writes_each_repeat_s_bits(intrinsics, which, expected):
    """Two repeats of 64 float32 into 128 bits; the register form compares one repeat,
    which Select's mode 0 takes again for the second 256 B; `bits = x > y` compares all
    of x (angle_v2's form)."""
    x = torch.rand(128)
    assert torch.equal(run(intrinsics, which, x), expected(x))


def _hand_on(intrinsics, which: int, x: torch.Tensor):
    """4 blocks of 8 float32, each handing its 8 to the previous block through workspace."""
    tiling = TilingRun(struct.pack("<2I", len(x), which), 4, 0, (len(x) * 4,))
    launch = intrinsics.launch({"x": x.numpy().tobytes()}, {"y": len(x) * 4}, tiling)
    return launch, torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float32)


def test_crosscore_flags_in_mode_0_hold_every_vector_core_until_all_have_set(intrinsics):
    x = torch.rand(32)
    launch, y = _hand_on(intrinsics, 40, x)
    assert launch.findings == ()  # no read of workspace before its block wrote it
    assert torch.equal(y, x.roll(-8))


def test_a_crosscore_flag_a_block_never_sets_is_a_hang(intrinsics):
    launch, _ = _hand_on(intrinsics, 41, torch.rand(32))
    [hang] = launch.findings
    assert hang.kind == "sync-hang" and "CrossCoreWaitFlag(3)" in hang.what, hang
    assert hang.file.endswith("intrinsics.cpp") and hang.line > 0


def test_raw_address_copies_move_what_datacopypad_does_and_scalarcast_rounds_as_cast(
    intrinsics,
):
    """DataCopyPadGm2UBImpl / DataCopyPadUB2GMImpl (GM and UB addresses, as kernels pass
    an int64 tensor as uint32; the first in a function qualified `__inout_pipe__(MTE2)`,
    from x with an L2 cache hint), ScalarCast to half (nearest even) and to int32 (floor)."""
    x = torch.randn(128)
    y = run(intrinsics, 42, x)
    assert torch.equal(y[16:], x[16:])
    assert torch.equal(y[:8], x[:8].half().float())
    assert torch.equal(y[8:16], torch.floor(x[:8] * 100))


def test_broadcast_repeats_a_column_along_its_rows(intrinsics):
    """Broadcast (BroadCast's newer name) of a 16 x 1 to 16 x 8."""
    x = torch.rand(128)
    assert torch.equal(run(intrinsics, 43, x), x[:16].repeat_interleave(8))


def test_a_tensor_at_a_ub_address_and_an_arith_progression_of_mixed_scalars(intrinsics):
    """LocalTensor(TPosition, byte address, size) sees what the pipe's buffer holds there
    (ops-nn's foreach_mul_list places its tiles so); ArithProgression<float>(dst, int64
    first, float diff, int64 count), as ops-transformer's moe routing calls it."""
    x = torch.rand(128)
    y = run(intrinsics, 44, x)
    assert torch.equal(y[:64], x[:64])
    assert torch.equal(y[64:], 3 + 0.5 * torch.arange(64.0))


def test_datacopypad_takes_padding_params_of_another_element_type(intrinsics):
    """7 float32 and a right padding of 1 element of value 2 (given as int32): a 32 B row."""
    x = torch.rand(128)
    y = run(intrinsics, 45, x)
    assert torch.equal(y[:8], torch.cat([x[:7], torch.tensor([2.0])]))
    assert torch.equal(y[8:], torch.full((120,), -1.0))


def test_sum_adds_the_real_elements_of_each_padded_row(intrinsics):
    """SumParams{outter 4, inner 16, n 13}: the 3 padding elements of each row left out."""
    x = torch.rand(128)
    y = run(intrinsics, 46, x)
    assert torch.allclose(y[:4], x[:64].view(4, 16)[:, :13].sum(1), rtol=1e-6)
    assert torch.equal(y[4:], torch.zeros(124))


def test_the_stack_buffer_is_the_ub_the_pipe_has_not_given_out(intrinsics):
    """PopStackBuffer after the kernel's 2,048 B TBuf: the rest of the 910B's 196,608 B,
    written to GM through DataCopyUB2GMImpl's raw addresses (16 blocks of 32 B)."""
    x = torch.rand(128)
    y = run(intrinsics, 47, x)
    assert y[0] == (196608 - 2048) // 4
    assert torch.equal(y[1:], x[1:])


def test_scalar_helpers_a_gm_element_and_a_configured_queue(intrinsics):
    """Ceil of scalars (a quotient's ceiling, mixed types), Std::min/max of mixed types,
    xGm(i), Cast of a bfloat16 scalar, Std::is_same, half and bfloat16 made from integers
    at compile time (rounded to nearest even); a TQue given a TQueConfig allocates. The
    kernel reads its tiling through REGISTER_TILING_DEFAULT and GET_TILING_DATA."""
    x = torch.rand(128)
    y = run(intrinsics, 48, x)
    assert y[:4].tolist() == [4, 2, -1, 5.5]
    assert y[4] == x[3] and y[5] == x[0].bfloat16().float()
    assert y[6] == 1
    integers = torch.tensor([3, 2049, -65519])  # constexpr half and bfloat16 from integers
    assert torch.equal(y[7:10], integers.half().float())
    assert y[10] == torch.tensor(257).bfloat16().float()


def test_copies_beyond_the_ub_are_findings_at_their_lines_and_move_nothing(intrinsics):
    """Past the UB the copy would touch the process's memory (a crash with no line)."""
    x = torch.rand(128)
    tiling = TilingRun(struct.pack("<2I", len(x), 49), 1, 0, (0,))
    launch = intrinsics.launch({"x": x.numpy().tobytes()}, {"y": len(x) * 4}, tiling)
    out, sorted_into, negative = launch.findings  # DataCopy from there, Sort32 into it
    for beyond in (out, sorted_into):
        assert beyond.kind == "ub-out-of-bounds" and beyond.file.endswith("intrinsics.cpp")
    assert sorted_into.line == out.line + 1
    # a GM length computed negative (ops-math feeds_repeat's): outside every buffer, no write
    assert negative.kind == "gm-out-of-bounds" and negative.line == out.line + 2, negative
    assert torch.equal(torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float32), x)
