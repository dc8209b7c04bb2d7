"""Each built-in GE kernel of the reference executor against the torch expression it
stands for: random inputs, attrs from a stub node, no protobuf, no TorchAir."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
import torch

from opsdk.offline.ge import GeExecutionError, GeGraphError, kernels

_MISSING = object()


class StubNode:
    """What a kernel reads of a node: its type, name, attrs by name, output count."""

    def __init__(self, op_type: str, attrs: dict, num_outputs: int):
        self.type = self.name = op_type
        self.attrs = attrs
        self.num_outputs = num_outputs

    def attr(self, name, default=_MISSING):
        if name in self.attrs:
            return self.attrs[name]
        if default is _MISSING:
            raise GeExecutionError(f"required attr {name!r} is missing")
        return default


def run(op_type: str, args: list, attrs: dict | None = None, num_outputs: int = 1) -> list:
    return kernels.lookup(op_type)(StubNode(op_type, attrs or {}, num_outputs), list(args))


_gen = torch.Generator().manual_seed(0)


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=_gen).to(dtype)


def pos(*shape):
    return torch.rand(*shape, generator=_gen) + 0.5


def ri(*shape, low=-5, high=6, dtype=torch.int32):
    return torch.randint(low, high, shape, generator=_gen, dtype=dtype)


def t(*values, dtype=torch.int32):
    return torch.tensor(values, dtype=dtype)


def b(*shape):
    return torch.rand(*shape, generator=_gen) > 0.5


def python_map(fn, x, y):
    """Python's own integer semantics, elementwise (floor division, modulo)."""
    pairs = zip(x.flatten().tolist(), y.flatten().tolist(), strict=True)
    return torch.tensor([fn(v, w) for v, w in pairs], dtype=x.dtype).reshape(x.shape)


@dataclass
class Case:
    op: str
    args: list
    expect: object  # callable(*args) -> tensor or list of tensors
    attrs: dict = field(default_factory=dict)
    id: str = ""


X, Y, P, Q = r(3, 4), r(3, 4), pos(3, 4), pos(3, 4)
I1, I2 = ri(3, 4), ri(3, 4, low=1)
B1, B2 = b(3, 4), b(3, 4)
H = r(3, 4, dtype=torch.float16)
M34, M45, B3 = r(3, 4), r(4, 5), r(2, 3, 4)

CASES = [
    # elementwise: unary
    Case("Neg", [X], lambda x: -x),
    Case("Abs", [X], lambda x: torch.where(x < 0, -x, x)),
    Case("Sqrt", [P], lambda x: x**0.5),
    Case("Rsqrt", [P], lambda x: 1 / x**0.5),
    Case("Relu", [X], lambda x: x.clamp(min=0)),
    Case("Tanh", [X], lambda x: (x.exp() - (-x).exp()) / (x.exp() + (-x).exp())),
    Case("Sigmoid", [X], lambda x: 1 / (1 + (-x).exp())),
    Case("Erf", [X], lambda x: torch.special.erf(x)),
    Case("Sin", [X], lambda x: torch.tensor([math.sin(v) for v in x.flatten()]).reshape(3, 4)),
    Case("Cos", [X], lambda x: torch.tensor([math.cos(v) for v in x.flatten()]).reshape(3, 4)),
    Case("Floor", [X * 3], lambda x: x - torch.remainder(x, 1)),
    Case("Ceil", [X * 3], lambda x: -((-x) - torch.remainder(-x, 1))),
    Case(
        "Round",
        [t(0.5, 1.5, 2.5, -0.5, dtype=torch.float32)],
        lambda x: t(0, 2, 2, 0, dtype=torch.float32),
    ),
    Case("Sign", [X], lambda x: (x > 0).float() - (x < 0).float()),
    Case("Reciprocal", [P], lambda x: 1 / x),
    Case("LogicalNot", [B1], lambda x: ~x),
    # elementwise: binary
    Case("Add", [X, Y], lambda x, y: x + y),
    Case("Add", [I1, I2], lambda x, y: x + y, id="int"),
    Case("Sub", [X, Y], lambda x, y: x - y),
    Case("Mul", [X, Y], lambda x, y: x * y),
    Case("Maximum", [X, Y], lambda x, y: torch.where(x > y, x, y)),
    Case("Minimum", [X, Y], lambda x, y: torch.where(x < y, x, y)),
    Case("Pow", [P, Y], lambda x, y: (y * x.log()).exp()),
    Case(
        "FloorDiv",
        [I1, I2],
        lambda x, y: python_map(lambda v, w: v // w, x, y),
    ),
    Case(
        "FloorMod",
        [I1, I2],
        lambda x, y: python_map(lambda v, w: v % w, x, y),
    ),
    Case("Less", [X, Y], lambda x, y: x < y),
    Case("LessEqual", [X, X], lambda x, y: x <= y),
    Case("Greater", [X, Y], lambda x, y: x > y),
    Case("GreaterEqual", [X, Y], lambda x, y: x >= y),
    Case("Equal", [I1, I2], lambda x, y: x == y),
    Case("NotEqual", [I1, I2], lambda x, y: x != y),
    Case("LogicalAnd", [B1, B2], lambda x, y: x & y),
    Case("LogicalOr", [B1, B2], lambda x, y: x | y),
    Case("RealDiv", [X, P], lambda x, y: x * (1 / y)),
    Case("Div", [H, H.abs() + 1], lambda x, y: (x.float() / y.float()).half(), id="fp16"),
    Case("Exp", [X], lambda x: x.exp()),
    Case(
        "Exp", [X], lambda x: 2 ** (3 * x + 1), {"base": 2.0, "scale": 3.0, "shift": 1.0}, "base2"
    ),
    Case("Log", [P], lambda x: x.log()),
    Case(
        "Log",
        [P],
        lambda x: (2 * x + 1).log() / math.log(10),
        {"base": 10.0, "scale": 2.0, "shift": 1.0},
        "base10",
    ),
    Case("AxpyV2", [X, Y, torch.tensor(2.5)], lambda x, y, a: x + 2.5 * y),
    Case("Axpy", [X, Y], lambda x, y: x - 0.5 * y, {"alpha": -0.5}),
    Case("Muls", [X], lambda x: x * 3, {"value": 3.0}),
    Case("Muls", [H], lambda x: (x * 3).half(), {"value": 3.0}, "fp16 stays fp16"),
    Case("Muls", [I1], lambda x: x * 2, {"value": 2.0}, "int stays int"),
    Case("Sxpy", [X, Y], lambda x, y: x - y),
    Case("Sxpy", [X, Y, torch.tensor(2.0)], lambda x, y, a: x - 2 * y, id="alpha"),
    Case(
        "ClipByValueV2",
        [X, torch.tensor(-0.5), torch.tensor(0.5)],
        lambda x, lo, hi: torch.where(x < -0.5, -0.5, torch.where(x > 0.5, 0.5, x)),
    ),
    Case("ClipByValueV2", [I1, t(-1), t(2)], lambda x, lo, hi: x.clamp(-1, 2), id="int stays int"),
    Case("LeakyRelu", [X], lambda x: torch.where(x > 0, x, 0.1 * x), {"negative_slope": 0.1}),
    Case("LeakyRelu", [X], lambda x: x.clamp(min=0), id="slope 0"),
    Case("SelectV2", [B1, X, Y], lambda c, x, y: x * c + y * ~c),
    Case("Cast", [X * 10], lambda x: x.trunc().int(), {"dst_type": 3}, "float->int32"),
    Case("Cast", [X], lambda x: x.half(), {"dst_type": 1}, "->fp16"),
    Case("Cast", [X], lambda x: x.bfloat16(), {"dst_type": 27}, "->bf16"),
    Case("Cast", [I1], lambda x: x != 0, {"dst_type": 12}, "->bool"),
    Case("SoftmaxV2", [X], lambda x: x.exp() / x.exp().sum(-1, keepdim=True)),
    Case(
        "SoftmaxV2", [X], lambda x: x.exp() / x.exp().sum(0, keepdim=True), {"axes": [0]}, "axis0"
    ),
    Case(
        "SoftmaxV2",
        [H],
        lambda x: x.float().exp() / x.float().exp().sum(-1, keepdim=True),
        {"half_to_float": True},
        "half_to_float",
    ),
    # creation
    Case("ZerosLike", [X.t()], lambda x: torch.zeros(4, 3)),
    Case("OnesLike", [I1], lambda x: torch.ones(3, 4, dtype=torch.int32)),
    Case("Fill", [t(2, 3), torch.tensor(7.0)], lambda d, v: torch.full((2, 3), 7.0)),
    Case("Range", [t(1), t(10), t(3)], lambda *a: t(1, 4, 7)),
    Case(
        "Range",
        [t(0), torch.tensor(1.0), torch.tensor(0.25)],
        lambda *a: torch.tensor([0, 0.25, 0.5, 0.75]),
        id="promotes",
    ),
    Case("Shape", [B3], lambda x: t(2, 3, 4)),
    Case("Shape", [B3], lambda x: t(2, 3, 4, dtype=torch.int64), {"dtype": 9}, "int64"),
    # shape and layout
    Case("Reshape", [X, t(2, -1)], lambda x, s: x.flatten().view(2, 6)),
    Case("Transpose", [B3, t(2, 0, 1)], lambda x, p: x.transpose(0, 2).transpose(1, 2)),
    Case("ExpandDims", [X, t(-1)], lambda x, a: x[:, :, None]),
    Case("Unsqueeze", [X], lambda x: x[None, :, None, :], {"axes": [0, -2]}),
    Case("Squeeze", [r(1, 3, 1)], lambda x: x.reshape(3)),
    Case("Squeeze", [r(1, 3, 1)], lambda x: x.reshape(1, 3), {"axis": [2]}, "axis"),
    Case("ConcatV2", [X, Y, t(1)], lambda x, y, d: torch.stack([x, y], 1).reshape(3, 8), {"N": 2}),
    Case("Concat", [t(0), X, Y], lambda d, x, y: torch.stack([x, y]).reshape(6, 4)),
    Case("Pack", [X, Y], lambda x, y: torch.cat([x[:, None], y[:, None]], 1), {"axis": 1}),
    Case("Split", [t(1), X], lambda d, x: [x[:, :2], x[:, 2:]], {"num_split": 2}),
    Case("SplitV", [X, t(1, -1), t(1)], lambda x, s, d: [x[:, :1], x[:, 1:]], {"num_split": 2}),
    Case("BroadcastTo", [r(3, 1), t(2, 3, 4)], lambda x, s: x + torch.zeros(2, 3, 4)),
    Case("Tile", [X, t(2, 1)], lambda x, m: torch.cat([x, x])),
    # indexing
    Case("StridedSlice", [B3, t(0, 1, 0), t(2, 3, 4), t(1, 1, 2)], lambda x, *_: x[:, 1:, ::2]),
    Case(
        "StridedSlice",
        [B3, t(1, 0, 0), t(0, 2, 0), t(1, 1, 1)],
        lambda x, *_: x[1:, :2, :],
        {"end_mask": 0b101},
        "end_mask",
    ),
    Case(
        "StridedSlice",
        [B3, t(-1, 0), t(0, 3), t(1, 1)],
        lambda x, *_: x[-1],
        {"shrink_axis_mask": 1},
        "shrink",
    ),
    Case("StridedSliceV2", [B3, t(1), t(100), t(2), t(2)], lambda x, *_: x[:, :, 1::2]),
    Case(
        "StridedSliceV2",
        [B3, t(0, 1), t(1, 3), None, None],
        lambda x, *_: x[0:1, 1:3],
        id="no axes",
    ),
    Case("Slice", [B3, t(1, 0, 2), t(1, -1, 2)], lambda x, *_: x[1:2, :, 2:4]),
    Case("GatherV2", [B3, t(2, 0, 2), t(-1)], lambda x, i, a: x[:, :, [2, 0, 2]]),
    Case(
        "GatherV2",
        [X, t(-1, 0), t(0)],
        lambda x, i, a: x[[2, 0]],
        {"negative_index_support": True},
        "negative",
    ),
    Case("Gather", [X, t(1, 2, 1, 0).reshape(2, 2)], lambda x, i: x[i.long()]),
    Case("IndexByTensor", [B3, t(1, 0, dtype=torch.int64)], lambda x, i: x[[1, 0]]),
    Case(
        "IndexByTensor",
        [B3, t(2, 0, dtype=torch.int64)],
        lambda x, i: x[:, [2, 0]],
        {"indices_mask": [0, 1]},
        "mask",
    ),
    # matmul
    Case("MatMul", [M34, M45], lambda a, w: torch.einsum("ij,jk->ik", a, w)),
    Case(
        "MatMul",
        [M34.t(), M45, r(5)],
        lambda a, w, c: torch.einsum("ji,jk->ik", a, w) + c,
        {"transpose_x1": True},
        "t1 bias",
    ),
    Case(
        "MatMulV2",
        [M34, M45.t()],
        lambda a, w: torch.einsum("ij,kj->ik", a, w),
        {"transpose_x2": True},
    ),
    Case(
        "BatchMatMul",
        [B3, r(2, 5, 4)],
        lambda a, w: torch.einsum("bij,bkj->bik", a, w),
        {"adj_x2": True},
    ),
    Case(
        "BatchMatMulV2",
        [r(2, 4, 3), r(4, 5), r(5)],
        lambda a, w, c: torch.einsum("bji,jk->bik", a, w) + c,
        {"adj_x1": True},
    ),
    # reductions
    Case("ReduceSum", [B3, t(0, 2)], lambda x, a: x.sum(0).sum(-1)),
    Case("ReduceSum", [B3, t(1)], lambda x, a: x.sum(1)[:, None], {"keep_dims": True}, "keep"),
    Case("ReduceSum", [B3, t()], lambda x, a: x, {"noop_with_empty_axes": True}, "noop"),
    Case("ReduceSum", [torch.tensor(2.0), t()], lambda x, a: x, id="0-dim"),
    Case("ReduceMean", [B3, t(-1)], lambda x, a: x.sum(-1) / 4),
    Case(
        "ReduceMax", [B3, t(1)], lambda x, a: torch.stack([x[:, i] for i in range(3)]).max(0).values
    ),
    # memory and control
    Case("Identity", [X], lambda x: x),
    Case("TensorMove", [X.t()], lambda x: x.contiguous()),
    Case("Assign", [X.clone(), Y], lambda ref, v: v),
    Case("NoOp", [X], lambda x: []),
    # dense memory seen through strides: [[m[1], m[5]], [m[2], m[6]]] of X.t()'s values
    Case(
        "AsStrided",
        [X.t(), t(2, 2), t(1, 4), t(1)],
        lambda x, *_: _picked(x, 1, 5, 2, 6),
    ),
    Case(
        "ViewCopy",  # dst[1:3, 1:3] = [[y[0], y[4]], [y[1], y[5]]]
        [X.clone(), t(2, 2), t(4, 1), t(5), Y, t(2, 2), t(1, 4), t(0)],
        lambda d, *_: _written(d, (slice(1, 3), slice(1, 3)), _picked(Y, 0, 4, 1, 5)),
    ),
]


def _picked(x, *at):
    """Elements ``at`` of ``x``'s dense row-major memory, as a 2x2 tensor."""
    return x.contiguous().reshape(-1)[torch.tensor(at).view(2, 2)]


def _written(dst, index, values):
    out = dst.clone()
    out[index] = values
    return out


def _ids(case):
    return f"{case.op}-{case.id}" if case.id else case.op


def test_every_kernel_has_a_case():
    assert set(kernels.op_types()) == {c.op for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_kernel_matches_torch(case):
    expected = case.expect(*case.args)
    expected = expected if isinstance(expected, list) else [expected]
    outputs = run(case.op, case.args, case.attrs, num_outputs=len(expected))
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected, strict=True):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-5, atol=1e-5)


def test_memory_kernels_alias_as_ge_does():
    """Identity hands its input on, TensorMove copies into fresh contiguous memory,
    Assign writes into its ref input (a GE ref output)."""
    x = r(4, 3).t()
    assert run("Identity", [x])[0] is x
    moved = run("TensorMove", [x])[0]
    assert moved.is_contiguous() and moved.data_ptr() != x.data_ptr()
    ref, value = r(3, 4), r(3, 4)
    assert run("Assign", [ref, value])[0] is ref
    assert torch.equal(ref, value)
    assert run("ZerosLike", [x])[0].is_contiguous()


REFUSALS = [
    ("RealDiv", [I1, I2], {}, "integer division semantics"),
    ("SoftmaxV2", [X], {"axes": [0, 1]}, "SoftmaxV2 over 2 axes"),
    ("Reshape", [X, t(12)], {"axis": 1}, "sub-range of axes"),
    ("StridedSlice", [X, t(0), t(1), t(1)], {"ellipsis_mask": 1}, "ellipsis_mask"),
    ("StridedSlice", [X, t(0), t(1), t(1)], {"new_axis_mask": 1}, "new_axis_mask"),
    ("StridedSlice", [X, t(2), t(0), t(-1)], {}, "stride -1"),
    ("GatherV2", [X, t(0), t(0)], {"batch_dims": 1}, "batch_dims"),
    ("GatherV2", [X, t(3), t(0)], {}, "index out of range"),
    ("GatherV2", [X, t(-1), t(0)], {}, "index out of range"),
    ("MatMulV2", [M34, M45, None, t(0)], {}, "quantized"),
    ("BatchMatMulV2", [M34, M45], {"offset_x": 1}, "quantized"),
    ("ReduceSum", [X, t()], {}, "ReduceSum with empty axes"),
    ("Assign", [X.clone(), r(4, 3)], {}, r"Assign of shape \[4, 3\] to \[3, 4\]"),
    ("ConcatV2", [X, Y, t(0)], {"N": 3}, "attr N=3 but 2"),
    ("Pack", [X, Y], {"N": 1}, "attr N=1 but 2"),
    ("Split", [t(1), r(3, 5)], {"num_split": 2}, "does not split into 2"),
    ("SplitV", [X, t(1, 3), t(1)], {"num_split": 3}, "2 split sizes for num_split=3"),
    ("IndexByTensor", [X, t(0, dtype=torch.int64)], {"indices_mask": [1, 1]}, "indices_mask"),
    ("ExpandDims", [X, t(0, 1)], {}, "single axis value"),
    ("Muls", [X], {}, "required attr 'value'"),
]


@pytest.mark.parametrize(
    ("op", "args", "attrs", "match"), REFUSALS, ids=[f"{r[0]}-{r[3][:20]}" for r in REFUSALS]
)
def test_kernel_refuses(op, args, attrs, match):
    with pytest.raises(GeExecutionError, match=match):
        run(op, args, attrs)


def test_cast_to_a_type_torch_lacks_is_a_graph_error():
    with pytest.raises(GeGraphError, match="GE data type 99 has no torch equivalent"):
        run("Cast", [X], {"dst_type": 99})
