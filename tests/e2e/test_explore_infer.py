"""The exploration of an op's input space against compiled C++ (opsdk.cann.explore.hold):
four planted ops whose fakes disagree with their ops-nn style InferShape / InferDataType
only at a rank, a mixed dtype row, an odd size at a split dim and an absent optional
input. Each is found, shrunk, and printed with both file:lines, the chip and a Support
line that pastes into specs.py; the correct twin of each (the same C++, a right fake)
gives no finding; a second run comes from the cache. A fifth C++ is wrong only at the -1
GE passes for a symbolic dim: found in the dynamic form. One library compiled per module."""

import inspect
import time
from pathlib import Path

import pytest
import torch
from infer_sources import infershape

from opsdk import inputs
from opsdk._runtime.irdef import Input, IrDef, Output
from opsdk.cann import CannOp, explore, infer
from opsdk.cann.explore.torch_side import TorchOp

_CPP = {
    "InferShapeLikeX1": """
static graphStatus InferShapeLikeX1(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}""",
    # the output takes x2's dtype (a mixed row tells x1's from x2's)
    "InferDtypeOfX2": """
static graphStatus InferDtypeOfX2(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(1));
    return GRAPH_SUCCESS;
}""",
    # an optional bias (IR input 2): x1's shape with or without it
    "InferShapeMaybeBias": """
static graphStatus InferShapeMaybeBias(gert::InferShapeContext* context)
{
    const gert::Shape* bias = context->GetOptionalInputShape(2);
    OP_CHECK_IF(bias != nullptr && bias->GetDimNum() == 0, OP_LOGE(context, "bias is 0-D"),
                return GRAPH_FAILED);
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}""",
    # halves the last dim, -1 too: (-1 + 1) / 2 writes a concrete 0 where GE keeps -1
    "InferShapeHalfOfMinus1": """
static graphStatus InferShapeHalfOfMinus1(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    y->SetDim(x->GetDimNum() - 1, (x->GetDim(x->GetDimNum() - 1) + 1) / 2);
    return GRAPH_SUCCESS;
}""",
}
SOURCE = infershape(
    [*_CPP.values(), "InferShapeAtMost4D", "InferShapeFirstHalf", "InferDtypeSame"],
    """
IMPL_OP_INFERSHAPE(AtMost4D).InferShape(InferShapeAtMost4D).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(OfX2).InferShape(InferShapeLikeX1).InferDataType(InferDtypeOfX2);
IMPL_OP_INFERSHAPE(FirstHalf).InferShape(InferShapeFirstHalf).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(MaybeBias).InferShape(InferShapeMaybeBias).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(HalfOfMinus1).InferShape(InferShapeHalfOfMinus1).InferDataType(InferDtypeSame);
""",
)
_ROWS = {
    "x1": ("DT_FLOAT16", "DT_FLOAT", "DT_FLOAT16"),
    "x2": ("DT_FLOAT16", "DT_FLOAT", "DT_FLOAT"),
}
_LIB = torch.library.Library("explore_t", "DEF")  # noqa: TID251 - the test's own ops


def _define(name: str, schema: str, fake) -> None:
    _LIB.define(f"{name}{schema}")
    torch.library.register_fake(f"explore_t::{name}", fake, lib=_LIB)


CASES = 120  # each planted fault is met well within them (the default budget is 300)
_PAIR = "(Tensor x1, Tensor x2) -> Tensor"
_BIAS = "(Tensor x1, Tensor x2, Tensor? bias=None) -> Tensor"


def _at_most_4d_wrong(x1, x2):
    return torch.empty_like(x1)  # takes a 5-D x1 that the C++ refuses


def _at_most_4d(x1, x2):
    torch._check(x1.dim() <= 4, lambda: "x1 has more than 4 dims")
    return torch.empty_like(x1)


def _of_x2_wrong(x1, x2):
    return torch.empty_like(x1)  # x1's dtype: wrong on the mixed row only


def _of_x2(x1, x2):
    return torch.empty_like(x1, dtype=x2.dtype)


def _first_half_wrong(x1, x2):
    return x1.new_empty((*x1.shape[:-1], x1.shape[-1] // 2))  # the smaller half at odd sizes


def _first_half(x1, x2):
    return x1.new_empty((*x1.shape[:-1], (x1.shape[-1] + 1) // 2))


def _maybe_bias_wrong(x1, x2, bias=None):
    if bias is None:  # drops the last dim on the path without a bias
        return x1.new_empty(x1.shape[:-1])
    return torch.empty_like(x1)


def _maybe_bias_strict(x1, x2, bias=None):
    return torch.empty_like(x1) + bias.new_zeros(())  # refuses the absent bias the C++ takes


def _maybe_bias(x1, x2, bias=None):
    return torch.empty_like(x1)


OPS = {  # op type -> (schema, wrong fake, right fake, finding kind)
    "AtMost4D": (_PAIR, _at_most_4d_wrong, _at_most_4d, "C++ refuses"),
    "OfX2": (_PAIR, _of_x2_wrong, _of_x2, "differ"),
    "FirstHalf": (_PAIR, _first_half_wrong, _first_half, "differ"),
    "MaybeBias": (_BIAS, _maybe_bias_wrong, _maybe_bias, "differ"),
}
_define("maybebias_strict", _BIAS, _maybe_bias_strict)
for _type, (_schema, _wrong, _right, _) in OPS.items():
    _define(f"{_type.lower()}_wrong", _schema, _wrong)
    _define(f"{_type.lower()}", _schema, _right)


def _cann(op_type: str) -> CannOp:
    bias = [Input("bias", "optional")] if op_type == "MaybeBias" else []
    ir = IrDef(op_type, inputs=[Input("x1"), Input("x2"), *bias], outputs=[Output("y")])
    return CannOp(ir, dict(_ROWS) | ({"bias": ("DT_FLOAT",) * 3} if bias else {}))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    root = tmp_path_factory.mktemp("explore") / "op_host"
    root.mkdir()
    (root / "pair_infershape.cpp").write_text(SOURCE)
    found = infer.find_all(root)
    library = infer.Library(infer.build(found["AtMost4D"], root).library, root)
    yield found, library, root / "pair_infershape.cpp"
    library.close()


def _held(compiled, op_type: str, name: str) -> dict:
    found, library, _ = compiled
    op = getattr(torch.ops.explore_t, name).default
    suffix = name.rpartition("_")[2] if "_" in name else ""
    fake = {"wrong": OPS[op_type][1], "strict": _maybe_bias_strict}.get(suffix, OPS[op_type][2])
    fake_at = f"{__file__}:{inspect.getsourcelines(fake)[1]}"
    side = TorchOp(op, _cann(op_type).ir, device="meta")
    return explore.hold(
        _cann(op_type),
        library,
        found[op_type],
        side,
        chip="ascend910b",
        fake_at=fake_at,
        cases=CASES,
    )


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("op_type", "smallest"),
    [
        ("AtMost4D", "Support(F16(1, 1, 1, 1, 1), F16(1, 1, 1, 1, 1))"),
        ("OfX2", "Support(F16(1), F32(1))"),
        ("FirstHalf", "Support(F16(1), F16(1))"),
        ("MaybeBias", "Support(F16(1), F16(1))"),
    ],
)
def test_a_planted_disagreement_is_found_shrunk_and_printed_pasteable(compiled, op_type, smallest):
    result = _held(compiled, op_type, f"{op_type.lower()}_wrong")
    _, _, cpp = compiled
    (line,) = result["findings"]
    assert line.startswith(f"explored: {OPS[op_type][3]} on {smallest}"), line
    function = "InferDtypeOfX2" if op_type == "OfX2" else _CPP_NAME[op_type]
    assert f"({cpp}:{_line(cpp, f'graphStatus {function}(')})" in line, line
    fake = OPS[op_type][1]
    assert f"[fake ({__file__}:{inspect.getsourcelines(fake)[1]})]" in line, line
    assert " as ascend910b;" in line
    assert isinstance(eval(smallest, vars(inputs)), inputs.Support)  # noqa: S307 - pasteable
    assert result["cases"] == CASES and not result["cached"]


_CPP_NAME = {
    "AtMost4D": "InferShapeAtMost4D",
    "FirstHalf": "InferShapeFirstHalf",
    "MaybeBias": "InferShapeMaybeBias",
}


@pytest.mark.parametrize("op_type", OPS)
def test_the_correct_twin_passes_and_a_second_run_is_cached(compiled, op_type):
    result = _held(compiled, op_type, op_type.lower())
    assert result["findings"] == [], result
    assert result["kinds"].get("agree", 0) > 100, result["kinds"]
    assert result["kinds"].get("agree (dynamic)", 0) >= 2, result["kinds"]  # -1 kept
    assert _held(compiled, op_type, op_type.lower())["cached"]


def test_a_fake_stricter_than_the_cpp_is_a_note_not_a_finding(compiled):
    """It may hold a kernel limit the C++ leaves to tiling, or miss a case the op takes."""
    result = _held(compiled, "MaybeBias", "maybebias_strict")
    assert result["findings"] == []
    (line,) = result["stricter"]
    assert line.startswith("explored: fake refuses on Support(F16(1), F16(1))"), line
    assert "the C++ accepts it, the fake raises: 'NoneType' object" in line


def test_a_cpp_writing_a_size_where_ge_keeps_minus_1_is_found_in_the_dynamic_form(compiled):
    """Its static cases all agree with the right fake; asked as GE compiles a dynamic graph
    (-1 at the dims the fake keeps symbolic), it writes 0 where the output must keep -1.
    FirstHalf's C++ (-1 kept) is its correct twin, asked the same way above."""
    found, library, cpp = compiled
    side = TorchOp(torch.ops.explore_t.firsthalf.default, _cann("HalfOfMinus1").ir, device="meta")
    start = time.perf_counter()
    result = explore.hold(
        _cann("HalfOfMinus1"),
        library,
        found["HalfOfMinus1"],
        side,
        chip="ascend910b",
        fake_at="",
        cases=CASES,
    )
    (line,) = result["findings"]
    assert line.startswith(
        "explored: differ on Support(F16(2), F16(2)) (met first as Support(F16(4, 4), F16(4, 4)))"
        " in the dynamic form (-1 at each dim"
    ), line
    assert "output 0: C++ [0], fake [-1]" in line, line
    assert f"({cpp}:{_line(cpp, 'graphStatus InferShapeHalfOfMinus1(')})" in line, line
    assert result["kinds"]["agree"] == CASES - explore.SYMBOLIC, result["kinds"]
    assert time.perf_counter() - start < 10
