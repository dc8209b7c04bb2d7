"""opsdk._runtime.meta helpers, each held to the real torch op it describes.

Three ways per helper: on concrete CPU tensors (output shape, dtype and device equal
the real op's; inputs the real op refuses are refused with the same exception type);
on fake tensors with symbolic sizes (output sizes are the same SymInt expressions
torch's own meta gives); and end to end, as the fake of a custom op checked by
``torch.library.opcheck`` and compiled with ``aot_eager``, ``dynamic=True``, across
shapes without a recompile. Data-dependent helpers run end to end with unbacked sizes.
"""

import pytest
import torch
from torch import Tensor
from torch._dynamo.testing import CompileCounterWithBackend
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

from opsdk._runtime import meta

f16, f32, f64 = torch.float16, torch.float32, torch.float64
i8, i16, i32, i64 = torch.int8, torch.int16, torch.int32, torch.int64
b8, c64 = torch.bool, torch.complex64


def T(*shape, dtype=f32):
    """An input spec: a zero-filled tensor (zero is a valid index for every index op)."""
    return (shape, dtype)


def _concrete(specs):
    return [torch.zeros(shape, dtype=dtype) for shape, dtype in specs]


def _symbolic(specs):
    """Fake tensors in one ShapeEnv, every size of 2 or more a dynamic symbol."""
    mode = FakeTensorMode(shape_env=ShapeEnv())
    tensors = []
    for shape, dtype in specs:
        ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * len(shape))
        tensors.append(mode.from_tensor(torch.zeros(shape, dtype=dtype), symbolic_context=ctx))
    return mode, tensors


def _exprs(shape):
    return [s.node.expr if isinstance(s, torch.SymInt) else s for s in shape]


# (helper, real op, inputs): the helper's output must look like the real op's.
MATCHES = {
    # elementwise: broadcasting and torch's type promotion, scalars and 0-dim tensors included
    "elementwise-broadcast": (meta.elementwise, torch.add, [T(4, 1, 3, dtype=f16), T(5, 3)]),
    "elementwise-0dim-keeps-f16": (meta.elementwise, torch.add, [T(2, 3, dtype=f16), T()]),
    "elementwise-int-scalar": (
        lambda x: meta.elementwise(x, 2.5),
        lambda x: torch.add(x, 2.5),
        [T(3, dtype=i32)],
    ),
    "elementwise-int-to-float": (
        lambda x, y: meta.elementwise(x, y, promotion="int_to_float"),
        torch.div,
        [T(2, 3, dtype=i64), T(3, dtype=i32)],
    ),
    "elementwise-always-bool": (
        lambda x, y: meta.elementwise(x, y, promotion="always_bool"),
        torch.eq,
        [T(2, 3), T(3, dtype=f64)],
    ),
    "elementwise-complex-to-float": (
        lambda x: meta.elementwise(x, promotion="complex_to_float"),
        torch.abs,
        [T(2, 3, dtype=c64)],
    ),
    "elementwise-bool-to-long": (
        lambda x: meta.elementwise(x, promotion="bool_to_long"),
        torch.square,
        [T(2, 3, dtype=b8)],
    ),
    "elementwise-dtype": (
        lambda x, y: meta.elementwise(x, y, dtype=b8),
        torch.gt,
        [T(2, 1), T(4)],
    ),
    # reductions
    "sum-dim": (lambda x: meta.reduction(x, 1), lambda x: torch.sum(x, 1), [T(2, 3, 4)]),
    "sum-dims-keepdim": (
        lambda x: meta.reduction(x, (0, -1), True),
        lambda x: torch.sum(x, (0, -1), True),
        [T(2, 3, 4)],
    ),
    "sum-all": (meta.reduction, torch.sum, [T(2, 3, 4)]),
    "sum-empty-dims-is-all": (
        lambda x: meta.reduction(x, []),
        lambda x: torch.sum(x, []),
        [T(2, 3)],
    ),
    "sum-int-accumulates-int64": (
        lambda x: meta.reduction(x, 0, dtype=i64),
        lambda x: torch.sum(x, 0),
        [T(2, 3, dtype=i32)],
    ),
    "sum-0dim": (
        lambda x: meta.reduction(x, 0, True),
        lambda x: torch.sum(x, 0, True),
        [T()],
    ),
    "mean-keepdim": (
        lambda x: meta.reduction(x, -1, True),
        lambda x: torch.mean(x, -1, True),
        [T(2, 3, dtype=f16)],
    ),
    "amax-dims": (
        lambda x: meta.reduction(x, [1, 2], empty_ok=False),
        lambda x: torch.amax(x, [1, 2]),
        [T(2, 3, 4)],
    ),
    "amax-empty-kept-dim": (
        lambda x: meta.reduction(x, 0, empty_ok=False),
        lambda x: torch.amax(x, 0),
        [T(2, 0)],
    ),
    "argmax-dim": (
        lambda x: meta.reduction(x, 1, dtype=i64, empty_ok=False),
        lambda x: torch.argmax(x, 1),
        [T(2, 3, 4)],
    ),
    "argmax-all-keepdim": (
        lambda x: meta.reduction(x, None, True, dtype=i64, empty_ok=False),
        lambda x: torch.argmax(x, None, True),
        [T(2, 3)],
    ),
    # matrix products
    "mm": (meta.mm, torch.mm, [T(2, 3), T(3, 4)]),
    "mm-transpose-a": (
        lambda a, b: meta.mm(a, b, transpose_a=True),
        lambda a, b: torch.mm(a.t(), b),
        [T(3, 2), T(3, 4)],
    ),
    "mm-transpose-b": (
        lambda a, b: meta.mm(a, b, transpose_b=True),
        lambda a, b: torch.mm(a, b.t()),
        [T(2, 3, dtype=f16), T(4, 3, dtype=f16)],
    ),
    "mm-int8-to-int32": (
        lambda a, b: meta.mm(a, b, dtype=i32),
        torch._int_mm,
        [T(2, 3, dtype=i8), T(3, 4, dtype=i8)],
    ),
    "bmm": (meta.bmm, torch.bmm, [T(2, 3, 4), T(2, 4, 5)]),
    "bmm-transposes": (
        lambda a, b: meta.bmm(a, b, transpose_a=True, transpose_b=True),
        lambda a, b: torch.bmm(a.mT, b.mT),
        [T(2, 4, 3), T(2, 5, 4)],
    ),
    "matmul-dot": (meta.matmul, torch.matmul, [T(3), T(3)]),
    "matmul-vector-matrix": (meta.matmul, torch.matmul, [T(3), T(5, 3, 4)]),
    "matmul-matrix-vector": (meta.matmul, torch.matmul, [T(2, 6, 2, 3), T(3)]),
    "matmul-broadcast-batch": (meta.matmul, torch.matmul, [T(2, 1, 2, 3), T(5, 3, 4)]),
    "matmul-batched-transpose-b": (
        lambda a, b: meta.matmul(a, b, transpose_b=True),
        lambda a, b: torch.matmul(a, b.mT),
        [T(6, 2, 3), T(4, 3)],
    ),
    # joining
    "cat": (lambda a, b: meta.cat([a, b]), lambda a, b: torch.cat([a, b]), [T(2, 3), T(4, 3)]),
    "cat-last-dim-promotes": (
        lambda a, b: meta.cat([a, b], -1),
        lambda a, b: torch.cat([a, b], -1),
        [T(2, 3, dtype=f16), T(2, 5)],
    ),
    "cat-skips-legacy-empty": (
        lambda a, b: meta.cat([a, b], 1),
        lambda a, b: torch.cat([a, b], 1),
        [T(0, dtype=f64), T(2, 3)],
    ),
    "cat-1d": (lambda a, b: meta.cat([a, b]), lambda a, b: torch.cat([a, b]), [T(0), T(3)]),
    "stack": (
        lambda a, b, c: meta.stack([a, b, c]),
        lambda a, b, c: torch.stack([a, b, c]),
        [T(2, 3), T(2, 3), T(2, 3)],
    ),
    "stack-new-last-dim": (
        lambda a, b: meta.stack([a, b], 2),
        lambda a, b: torch.stack([a, b], 2),
        [T(2, 3, dtype=i32), T(2, 3)],
    ),
    "stack-negative-dim": (
        lambda a, b: meta.stack([a, b], -2),
        lambda a, b: torch.stack([a, b], -2),
        [T(2, 3), T(2, 3)],
    ),
    "stack-0dim": (
        lambda a, b: meta.stack([a, b]),
        lambda a, b: torch.stack([a, b]),
        [T(dtype=f64), T()],
    ),
    # indexing
    "index-select": (
        lambda x, i: meta.index_select(x, 1, i),
        lambda x, i: torch.index_select(x, 1, i),
        [T(3, 4), T(5, dtype=i64)],
    ),
    "index-select-int32-0dim-index": (
        lambda x, i: meta.index_select(x, -1, i),
        lambda x, i: torch.index_select(x, -1, i),
        [T(3, 4, dtype=f16), T(dtype=i32)],
    ),
    "index-select-0dim": (
        lambda x, i: meta.index_select(x, 0, i),
        lambda x, i: torch.index_select(x, 0, i),
        [T(), T(1, dtype=i64)],
    ),
    "gather": (
        lambda x, i: meta.gather(x, 1, i),
        lambda x, i: torch.gather(x, 1, i),
        [T(3, 4), T(2, 6, dtype=i64)],
    ),
    "gather-int32": (
        lambda x, i: meta.gather(x, 0, i),
        lambda x, i: torch.gather(x, 0, i),
        [T(3, 4, dtype=f64), T(5, 4, dtype=i32)],
    ),
    "gather-empty-index-unchecked": (
        lambda x, i: meta.gather(x, 1, i),
        lambda x, i: torch.gather(x, 1, i),
        [T(3, 4), T(0, 9, dtype=i16)],
    ),
    "gather-0dim": (
        lambda x, i: meta.gather(x, 0, i),
        lambda x, i: torch.gather(x, 0, i),
        [T(), T(dtype=i64)],
    ),
}

# (helper, real op, inputs, message): both refuse the inputs, with the same exception type.
REFUSALS = {
    "inplace-grows-target": (meta.inplace, torch.Tensor.add_, [T(3), T(2, 3)], "does not fit"),
    "sum-dim-out-of-range": (
        lambda x: meta.reduction(x, 2),
        lambda x: torch.sum(x, 2),
        [T(2, 3)],
        "out of range",
    ),
    "sum-repeated-dim": (
        lambda x: meta.reduction(x, (0, -2)),
        lambda x: torch.sum(x, (0, -2)),
        [T(2, 3)],
        "multiple times",
    ),
    "amax-empty-dim": (
        lambda x: meta.reduction(x, 1, empty_ok=False),
        lambda x: torch.amax(x, 1),
        [T(2, 0)],
        "non-zero size",
    ),
    "argmax-all-of-empty": (
        lambda x: meta.reduction(x, dtype=i64, empty_ok=False),
        torch.argmax,
        [T(0, 3)],
        "non-zero size",
    ),
    "mm-inner-dims": (meta.mm, torch.mm, [T(2, 3), T(4, 5)], "cannot be multiplied"),
    "mm-transposed-inner-dims": (
        lambda a, b: meta.mm(a, b, transpose_b=True),
        lambda a, b: torch.mm(a, b.t()),
        [T(2, 3), T(3, 4)],
        "after the requested transposes",
    ),
    "mm-3d": (meta.mm, torch.mm, [T(2, 2, 3), T(3, 4)], "must be 2-D"),
    "mm-dtypes": (meta.mm, torch.mm, [T(2, 3), T(3, 4, dtype=f64)], "same dtype"),
    "bmm-batch": (meta.bmm, torch.bmm, [T(2, 2, 3), T(3, 3, 5)], "same batch size"),
    "bmm-2d": (meta.bmm, torch.bmm, [T(2, 3), T(3, 5)], "must be 3-D"),
    "matmul-0dim": (meta.matmul, torch.matmul, [T(), T(4)], "at least 1-D"),
    "matmul-dot-sizes": (meta.matmul, torch.matmul, [T(3), T(4)], "cannot be multiplied"),
    "matmul-batch-not-broadcastable": (
        meta.matmul,
        torch.matmul,
        [T(2, 2, 3), T(3, 3, 4)],
        "broadcast",
    ),
    "matmul-transpose-vector": (
        lambda a, b: meta.matmul(a, b, transpose_a=True),
        lambda a, b: torch.matmul(a.mT, b),
        [T(3), T(3, 4)],
        "transpose_a needs at least 2 dims",
    ),
    "cat-none": (lambda: meta.cat([]), lambda: torch.cat([]), [], "non-empty"),
    "cat-0dim": (
        lambda a, b: meta.cat([a, b]),
        lambda a, b: torch.cat([a, b]),
        [T(2), T()],
        "zero-dimensional",
    ),
    "cat-ranks": (
        lambda a, b: meta.cat([a, b]),
        lambda a, b: torch.cat([a, b]),
        [T(2, 3), T(2, 3, 1)],
        "same number of dimensions",
    ),
    "cat-sizes": (
        lambda a, b: meta.cat([a, b]),
        lambda a, b: torch.cat([a, b]),
        [T(2, 3), T(2, 4)],
        "must match except in dimension 0",
    ),
    "cat-dim": (
        lambda a, b: meta.cat([a, b], 2),
        lambda a, b: torch.cat([a, b], 2),
        [T(2, 3), T(2, 3)],
        "out of range",
    ),
    "stack-none": (lambda: meta.stack([]), lambda: torch.stack([]), [], "non-empty"),
    "stack-sizes": (
        lambda a, b: meta.stack([a, b]),
        lambda a, b: torch.stack([a, b]),
        [T(2, 3), T(3, 3)],
        "equal size",
    ),
    "stack-dim": (
        lambda a, b: meta.stack([a, b], 3),
        lambda a, b: torch.stack([a, b], 3),
        [T(2, 3), T(2, 3)],
        "out of range",
    ),
    "index-select-matrix-index": (
        lambda x, i: meta.index_select(x, 0, i),
        lambda x, i: torch.index_select(x, 0, i),
        [T(3, 4), T(2, 2, dtype=i64)],
        "must be a vector",
    ),
    "index-select-float-index": (
        lambda x, i: meta.index_select(x, 0, i),
        lambda x, i: torch.index_select(x, 0, i),
        [T(3, 4), T(2)],
        "int32 or int64",
    ),
    "index-select-0dim-two-indices": (
        lambda x, i: meta.index_select(x, 0, i),
        lambda x, i: torch.index_select(x, 0, i),
        [T(), T(2, dtype=i64)],
        "only 1 value",
    ),
    "gather-index-dtype": (
        lambda x, i: meta.gather(x, 1, i),
        lambda x, i: torch.gather(x, 1, i),
        [T(3, 4), T(3, 2, dtype=i16)],
        "int32 or int64",
    ),
    "gather-ranks": (
        lambda x, i: meta.gather(x, 1, i),
        lambda x, i: torch.gather(x, 1, i),
        [T(3, 4), T(3, 2, 1, dtype=i64)],
        "same number of dimensions",
    ),
    "gather-index-too-large": (
        lambda x, i: meta.gather(x, 1, i),
        lambda x, i: torch.gather(x, 1, i),
        [T(3, 4), T(4, 2, dtype=i64)],
        "no larger than input",
    ),
    "gather-dim": (
        lambda x, i: meta.gather(x, -3, i),
        lambda x, i: torch.gather(x, -3, i),
        [T(3, 4), T(3, 2, dtype=i64)],
        "out of range",
    ),
    "masked-select-uint8-mask": (
        meta.masked_select,
        torch.masked_select,
        [T(2, 3), T(3, dtype=torch.uint8)],
        "bool mask",
    ),
    "masked-select-not-broadcastable": (
        meta.masked_select,
        torch.masked_select,
        [T(2, 3), T(4, 3, dtype=b8)],
        "broadcast",
    ),
}


@pytest.mark.parametrize("case", MATCHES.values(), ids=MATCHES.keys())
def test_output_matches_the_real_op(case):
    helper, real, specs = case
    expected, out = real(*_concrete(specs)), helper(*_concrete(specs))
    assert (out.shape, out.dtype, out.device) == (expected.shape, expected.dtype, expected.device)


@pytest.mark.parametrize("case", MATCHES.values(), ids=MATCHES.keys())
def test_symbolic_sizes_match_torchs_own_meta(case):
    helper, real, specs = case
    mode, tensors = _symbolic(specs)
    with mode:
        expected = real(*tensors)
        # Taken before the helper runs: a size it specializes (say s0 == 3) would
        # otherwise be replaced in the oracle's sizes too, and compare equal.
        expected_sizes = _exprs(expected.shape)
        out = helper(*tensors)
    assert _exprs(out.shape) == expected_sizes and out.dtype == expected.dtype


@pytest.mark.parametrize("symbolic", [False, True], ids=["concrete", "symbolic"])
@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_refuses_what_the_real_op_refuses(case, symbolic):
    helper, real, specs, message = case
    with pytest.raises(Exception) as refused:
        real(*_concrete(specs))
    if symbolic:
        mode, tensors = _symbolic(specs)
        with mode, pytest.raises(type(refused.value), match=message):
            helper(*tensors)
    else:
        with pytest.raises(type(refused.value), match=message):
            helper(*_concrete(specs))


@pytest.mark.parametrize(
    "helper, real",
    [
        (meta.elementwise, torch.add),
        (meta.inplace, torch.Tensor.add_),
        (meta.matmul, torch.matmul),
        (lambda a, b: meta.cat([a, b]), lambda a, b: torch.cat([a, b])),
        (lambda a, b: meta.stack([a, b]), lambda a, b: torch.stack([a, b])),
        (
            lambda x, i: meta.index_select(x, 0, i.long()[0]),
            lambda x, i: torch.index_select(x, 0, i.long()[0]),
        ),
        (lambda x, i: meta.gather(x, 0, i.long()), lambda x, i: torch.gather(x, 0, i.long())),
        (
            lambda x, m: meta.masked_select(x, m.bool()),
            lambda x, m: torch.masked_select(x, m.bool()),
        ),
    ],
)
def test_tensors_on_two_devices_are_refused(helper, real):
    with FakeTensorMode():
        x, y = torch.zeros(2, 2, device="cuda"), torch.zeros(2, 2)
        with pytest.raises(RuntimeError):
            real(x, y)
        with pytest.raises(RuntimeError, match="device"):
            helper(x, y)


def test_a_cpu_scalar_tensor_joins_elementwise_ops_on_any_device():
    with FakeTensorMode():
        x, scalar = torch.zeros(2, device="cuda"), torch.tensor(1.0)
        assert meta.elementwise(scalar, x).device == torch.add(scalar, x).device == x.device
        assert meta.inplace(x, scalar) is None


def test_elementwise_needs_a_tensor_and_a_known_promotion():
    with pytest.raises(ValueError, match="at least one tensor"):
        meta.elementwise(2, 3.0)
    with pytest.raises(ValueError, match="promotion must be one of"):
        meta.elementwise(torch.zeros(2), promotion="int-to-float")


def test_same_as_keeps_shape_device_and_takes_dtype():
    x = torch.empty(2, 3).t()
    out = meta.same_as(x, dtype=torch.int32)
    assert out.shape == (3, 2) and out.dtype == torch.int32 and out.is_contiguous()
    mode, (s,) = _symbolic([T(2, 3)])
    with mode:
        assert _exprs(meta.same_as(s).shape) == _exprs(s.shape)


def test_inplace_returns_nothing_for_a_fitting_input_also_with_symbolic_sizes():
    assert meta.inplace(torch.empty(2, 3), torch.empty(3)) is None
    mode, (x, y) = _symbolic([T(4, 5), T(5)])
    with mode:
        assert meta.inplace(x, y) is None


def test_a_matmul_output_dtype_admits_mixed_operands():
    """Weight-only quantized products (float16 activations, int8 weights) name their dtype."""
    x, w = torch.zeros(2, 3, dtype=f16), torch.zeros(4, 3, dtype=i8)
    out = meta.matmul(x, w, transpose_b=True, dtype=f16)
    assert (out.shape, out.dtype) == ((2, 4), f16)


def test_data_dependent_sizes_need_the_fake_context():
    with pytest.raises(RuntimeError, match="register_fake"):
        meta.nonzero(torch.ones(3))


# End to end: custom ops whose fake functions are the helpers.

NS = "opsdk_meta_test"


@torch.library.custom_op(f"{NS}::add", mutates_args=())
def add_op(x: Tensor, y: Tensor) -> Tensor:
    return torch.add(x, y)


add_op.register_fake(meta.elementwise)


@torch.library.custom_op(f"{NS}::add_", mutates_args=("x",))
def add_inplace_op(x: Tensor, y: Tensor) -> None:
    x.add_(y)


add_inplace_op.register_fake(meta.inplace)


@torch.library.custom_op(f"{NS}::sum", mutates_args=())
def sum_op(x: Tensor, dim: list[int] | None, keepdim: bool) -> Tensor:
    return torch.sum(x, dim, keepdim)


sum_op.register_fake(meta.reduction)


@torch.library.custom_op(f"{NS}::argmax", mutates_args=())
def argmax_op(x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    return torch.argmax(x, dim, keepdim)


@argmax_op.register_fake
def _(x, dim, keepdim):
    return meta.reduction(x, dim, keepdim, dtype=torch.int64, empty_ok=False)


@torch.library.custom_op(f"{NS}::mm", mutates_args=())
def mm_op(a: Tensor, b: Tensor) -> Tensor:
    return torch.mm(a, b)


mm_op.register_fake(meta.mm)


@torch.library.custom_op(f"{NS}::bmm", mutates_args=())
def bmm_op(a: Tensor, b: Tensor) -> Tensor:
    return torch.bmm(a, b)


bmm_op.register_fake(meta.bmm)


@torch.library.custom_op(f"{NS}::matmul", mutates_args=())
def matmul_op(a: Tensor, b: Tensor, transpose_b: bool) -> Tensor:
    return torch.matmul(a, b.mT if transpose_b else b)


@matmul_op.register_fake
def _(a, b, transpose_b):
    return meta.matmul(a, b, transpose_b=transpose_b)


@torch.library.custom_op(f"{NS}::cat", mutates_args=())
def cat_op(tensors: list[Tensor], dim: int) -> Tensor:
    return torch.cat(tensors, dim)


cat_op.register_fake(meta.cat)


@torch.library.custom_op(f"{NS}::stack", mutates_args=())
def stack_op(tensors: list[Tensor], dim: int) -> Tensor:
    return torch.stack(tensors, dim)


stack_op.register_fake(meta.stack)


@torch.library.custom_op(f"{NS}::index_select", mutates_args=())
def index_select_op(x: Tensor, dim: int, index: Tensor) -> Tensor:
    return torch.index_select(x, dim, index)


index_select_op.register_fake(meta.index_select)


@torch.library.custom_op(f"{NS}::gather", mutates_args=())
def gather_op(x: Tensor, dim: int, index: Tensor) -> Tensor:
    return torch.gather(x, dim, index)


gather_op.register_fake(meta.gather)


@torch.library.custom_op(f"{NS}::nonzero", mutates_args=())
def nonzero_op(x: Tensor) -> Tensor:
    return torch.nonzero(x).contiguous()  # torch's is column-major; outputs are contiguous


nonzero_op.register_fake(meta.nonzero)


@torch.library.custom_op(f"{NS}::masked_select", mutates_args=())
def masked_select_op(x: Tensor, mask: Tensor) -> Tensor:
    return torch.masked_select(x, mask)


masked_select_op.register_fake(meta.masked_select)


@torch.library.custom_op(f"{NS}::nonzero_overflowing", mutates_args=())
def nonzero_overflowing_op(x: Tensor) -> Tensor:
    """A broken kernel: one row more than ``x`` has elements."""
    return torch.zeros(x.numel() + 1, x.dim(), dtype=torch.int64)


nonzero_overflowing_op.register_fake(meta.nonzero)


def _r(*shape, dtype=f32):
    return torch.randn(shape).to(dtype)


def _i(high, *shape):
    return torch.randint(high, shape)


def _add_inplace(x, y):
    x = x.clone()
    add_inplace_op(x, y)
    return x


# (op, function to compile, inputs per call): the calls differ in shape.
END_TO_END = {
    "elementwise": (add_op, add_op, [(_r(4, 1, 3), _r(5, 3)), (_r(6, 1, 2), _r(7, 2))]),
    "inplace": (add_inplace_op, _add_inplace, [(_r(4, 3), _r(3)), (_r(6, 5), _r(5))]),
    "reduction": (sum_op, sum_op, [(_r(2, 3, 4), [0, 2], False), (_r(5, 6, 7), [0, 2], False)]),
    "reduction-keepdim": (sum_op, sum_op, [(_r(2, 3, 4), None, True), (_r(5, 6, 7), None, True)]),
    "arg-reduction": (argmax_op, argmax_op, [(_r(2, 3, 4), 1, False), (_r(5, 6, 7), 1, False)]),
    "mm": (mm_op, mm_op, [(_r(2, 3), _r(3, 4)), (_r(5, 6), _r(6, 7))]),
    "bmm": (bmm_op, bmm_op, [(_r(2, 3, 4), _r(2, 4, 5)), (_r(6, 7, 8), _r(6, 8, 9))]),
    "matmul-transpose-b": (
        matmul_op,
        matmul_op,
        [(_r(2, 3, 4), _r(5, 4), True), (_r(6, 7, 8), _r(9, 8), True)],
    ),
    "cat": (cat_op, cat_op, [([_r(2, 3), _r(2, 4)], 1), ([_r(5, 6), _r(5, 7)], 1)]),
    "stack": (stack_op, stack_op, [([_r(2, 3), _r(2, 3)], 1), ([_r(5, 6), _r(5, 6)], 1)]),
    "index-select": (
        index_select_op,
        index_select_op,
        [(_r(3, 4), 1, _i(4, 5)), (_r(6, 7), 1, _i(7, 8))],
    ),
    "gather": (gather_op, gather_op, [(_r(3, 4), 1, _i(4, 3, 5)), (_r(6, 7), 1, _i(7, 6, 8))]),
    "nonzero": (nonzero_op, nonzero_op, [(_i(2, 3, 4).float(),), (_i(2, 6, 7).float(),)]),
    "masked-select": (
        masked_select_op,
        masked_select_op,
        [(_r(3, 4), _i(2, 4).bool()), (_r(6, 7), _i(2, 7).bool())],
    ),
}


@pytest.mark.parametrize("case", END_TO_END.values(), ids=END_TO_END.keys())
def test_custom_op_passes_opcheck_and_compiles_with_dynamic_shapes(case):
    op, fn, calls = case
    for args in calls:
        torch.library.opcheck(
            op,
            args,
            test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"),
        )
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=True)
    for args in calls:
        torch.testing.assert_close(compiled(*args), fn(*args))
    assert counter.frame_count == 1, "a new shape recompiled: the fake specialized a size"


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_unbacked_size_is_bounded_at_run_time(dynamic):
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda x: nonzero_overflowing_op(x) + 1,
        backend="aot_eager",
        fullgraph=True,
        dynamic=dynamic,
    )
    with pytest.raises(RuntimeError, match=r"Runtime assertion failed for expression u\d+ <= "):
        compiled(torch.ones(2, 3))
