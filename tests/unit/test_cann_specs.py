"""The specs `opsdk new --from-cann` writes: the definition's dtypes and attr defaults,
ranks it hints, sizes that keep tensors compatible, in the torch op's argument order."""

import pytest

from opsdk._runtime import spec
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import CannOp
from opsdk.cann.infer.call import Given
from opsdk.cann.specs import GIVEN, TESTED, cases
from opsdk.cann.tiling.run import Case
from opsdk.errors import SpecError


def _op(inputs, attrs=(), formats=None, dtypes=None):
    names = [i.name for i in inputs]
    dtypes = dtypes or {n: ("DT_FLOAT16", "DT_FLOAT") for n in [*names, "y"]}
    formats = formats or {n: ("ND",) * len(d) for n, d in dtypes.items()}
    ir = IrDef("Op", inputs, [Output("y")], attrs)
    return CannOp(ir, dtypes, formats)


def test_one_case_per_dtype_row_sizes_alike_for_several_tensors():
    cann = _op([Input("a"), Input("b")])
    op = spec.parse("t::op(Tensor a, Tensor b) -> Tensor")
    assert cases(op, cann.ir, cann) == (
        "Support(F16(4, 4), F16(4, 4))",
        "Support(F32(4, 4), F32(4, 4))",
    )


def test_a_lone_tensor_gets_distinct_sizes():
    cann = _op([Input("x")])
    op = spec.parse("t::op(Tensor x) -> Tensor")
    assert cases(op, cann.ir, cann)[0] == "Support(F16(2, 3))"


@pytest.mark.parametrize(
    ("attrs", "formats", "shape"),
    [
        ((), {"x": ("NCHW",), "y": ("NCHW",)}, "2, 3, 4, 5"),  # a fixed-rank format
        ((), {"x": ("FORMAT_NCDHW",), "y": ("FORMAT_NCDHW",)}, "2, 3, 4, 5, 6"),  # OpDef's
        ((Attr("perm", "VT_LIST_INT", (0, 2, 1)),), None, "2, 3, 4"),  # a rank-long list
        ((Attr("axis", "VT_INT", -3),), None, "2, 3, 4"),  # a dim: rank >= 3
        ((Attr("dim", "VT_INT", 3),), None, "2, 3, 4, 5"),
        ((Attr("axis", "VT_INT", 0),), None, "2, 3"),  # a lower bound: the default 2 stays
        ((Attr("scale", "VT_LIST_INT", (1, 1, 1)),), None, "2, 3"),  # no rank in its name
    ],
)
def test_ranks_the_definition_hints(attrs, formats, shape):
    dtypes = {"x": ("DT_FLOAT",), "y": ("DT_FLOAT",)}
    cann = _op([Input("x")], attrs, formats, dtypes)
    op = spec.parse("t::op(Tensor x) -> Tensor")
    assert cases(op, cann.ir, cann) == (f"Support(F32({shape}))",)


def test_required_values_optional_dynamic_and_the_torch_ops_order():
    """An attached op orders and names its arguments its own way (self for x): the case
    follows the torch op, the dtypes CANN's names; defaults are left to the schema."""
    dtypes = {"x": ("DT_BF16",), "idx": ("DT_INT64",), "xs": ("DT_FLOAT",), "y": ("DT_BF16",)}
    cann = _op([Input("x"), Input("xs", "dynamic"), Input("idx", "optional")], dtypes=dtypes)
    ir = IrDef("Op", cann.ir.inputs, cann.ir.outputs, arg_names={"self": "x"})
    op = spec.parse(
        "t::op(Tensor[] xs, Tensor self, Tensor? idx, int k, float eps=1e-5, *, int[] perm)"
        " -> Tensor"
    )
    rows, given = cases(op, ir, cann)
    assert rows == "Support([F32(4, 4), F32(4, 4)], BF16(4, 4), None, 1, perm=[1, 0])"
    # One case more passes what the rows leave out: a converter that drops it fails there.
    assert given == (
        f"# {GIVEN}\n"
        "Support([F32(4, 4), F32(4, 4)], BF16(4, 4), I64(4, 4), 1, 0.50001, perm=[1, 0])"
    )


def test_bool_attrs_flip_and_attrs_without_a_sure_other_value_stay():
    attrs = [Attr("keep", "VT_BOOL", False), Attr("mode", "VT_STRING", "mean")]
    attrs.append(Attr("axes", "VT_LIST_INT", (0,)))
    cann = _op([Input("x")], attrs, dtypes={"x": ("DT_FLOAT",), "y": ("DT_FLOAT",)})
    op = spec.parse(
        't::op(Tensor x, *, bool keep=False, str mode="mean", int[] axes=[0]) -> Tensor'
    )
    assert cases(op, cann.ir, cann) == (
        "Support(F32(2, 3))",
        f"# {GIVEN}\nSupport(F32(2, 3), keep=True)",
    )


def test_a_row_torch_cannot_make_is_left_out_and_none_left_is_refused():
    dtypes = {"x": ("DT_UINT16", "DT_FLOAT"), "y": ("DT_UINT16", "DT_FLOAT")}
    cann = _op([Input("x")], dtypes=dtypes)
    op = spec.parse("t::op(Tensor x) -> Tensor")
    assert cases(op, cann.ir, cann) == (
        "# left out here, kept in ir.py and the exports: DT_UINT16 (torch's CPU kernels\n"
        "# do not compute them)\nSupport(F32(2, 3))",
    )
    cann = _op([Input("x")], dtypes={"x": ("DT_UINT16",), "y": ("DT_UINT16",)})
    with pytest.raises(SpecError, match="no declared dtype combination has torch dtypes"):
        cases(op, cann.ir, cann)


def test_unsigned_and_wide_dtypes_cann_declares_have_specs():
    """A uint8 mask beside fp16 gradients (ReluGradV4's row), a uint64 dequant scale."""
    dtypes = {
        "g": ("DT_FLOAT16",),
        "mask": ("DT_UINT8",),
        "s": ("DT_UINT64",),
        "y": ("DT_FLOAT16",),
    }
    cann = _op([Input("g"), Input("mask"), Input("s")], dtypes=dtypes)
    op = spec.parse("t::op(Tensor g, Tensor mask, Tensor s) -> Tensor")
    assert cases(op, cann.ir, cann) == ("Support(F16(4, 4), U8(4, 4), U64(4, 4))",)


@pytest.mark.parametrize("wide", ["DT_UINT16", "DT_UINT32", "DT_UINT64"])
def test_a_row_whose_output_torch_s_cpu_cannot_compute_is_left_out_with_the_reason(wide):
    """Cumsum's uint64 row: torch's CPU kernels have no uint64 cumsum, so the reference could
    not run it ("cumsum_out_cpu" not implemented for 'UInt64'); the row is left out, said."""
    cann = _op([Input("x")], dtypes={"x": ("DT_FLOAT", wide), "y": ("DT_FLOAT", wide)})
    op = spec.parse("t::op(Tensor x) -> Tensor")
    (case,) = cases(op, cann.ir, cann)
    said, last = case.rsplit("\n", 1)
    assert last == "Support(F32(2, 3))"
    assert " ".join(line.removeprefix("# ") for line in said.splitlines()) == (
        f"left out here, kept in ir.py and the exports: {wide} (torch's CPU kernels do not "
        "compute them)"
    )
    kept = _op([Input("x")], dtypes={"x": ("DT_FLOAT", "DT_INT64"), "y": ("DT_FLOAT", "DT_INT64")})
    assert cases(op, kept.ir, kept) == ("Support(F32(2, 3))", "Support(I64(2, 3))")


def _tested(inputs, attrs=(), where="test_op_tiling.cpp:9 op_case") -> Case:
    return Case(inputs, (Given(1, (8, 16)),), attrs, label=f"{where}: inputs")


def test_the_op_s_own_tested_cases_follow_named_after_their_test():
    """Shapes and attrs the op's own tiling tests give it (its definition states no
    shapes): the smallest first, at most TESTED, each once, by the torch op's order;
    an attr at its default left to the schema, a required one positional."""
    dtypes = {"x": ("DT_FLOAT16",), "idx": ("DT_INT64",), "xs": ("DT_FLOAT",), "y": ("DT_FLOAT16",)}
    attrs = [
        Attr("groups", "VT_INT"),
        Attr("eps", "VT_FLOAT", 1e-5),
        Attr("dims", "VT_LIST_INT", (0,)),
    ]
    cann = _op([Input("x"), Input("xs", "dynamic"), Input("idx", "optional")], attrs, dtypes=dtypes)
    op = spec.parse(
        "t::op(Tensor[] xs, Tensor x, Tensor? idx, int groups, float eps=1e-5, int[] dims=[0])"
        " -> Tensor"
    )
    x, xs = (Given(1, (8, 16)),), (Given(0, (2,)), Given(0, (3,)))
    tested = [
        _tested((x, xs, ()), (32, 1e-5, (0,)), "test_op_tiling.cpp:9 small"),
        _tested((x, xs, ()), (32, 1e-5, (0,)), "test_op_tiling.cpp:20 same"),  # the same case
        _tested((x, xs, (Given(9, (4,)),)), (4, 0.5, (1, 2)), "test_op_tiling.cpp:30 given"),
        _tested((x, (Given(2, (2,)),), ()), (1,), "test_op_tiling.cpp:40 int8"),
        _tested((x, xs, ()), (8,), "test_op_tiling.cpp:50 past TESTED"),
    ]
    found = cases(op, cann.ir, cann, tested=tested)[-TESTED:]
    assert found == (
        "# the op's own test test_op_tiling.cpp:9 small\n"
        "Support([F32(2), F32(3)], F16(8, 16), None, 32)",
        "# the op's own test test_op_tiling.cpp:30 given\n"
        "Support([F32(2), F32(3)], F16(8, 16), I64(4), 4, eps=0.5, dims=[1, 2])",
        "# the op's own test test_op_tiling.cpp:40 int8\nSupport([I8(2)], F16(8, 16), None, 1)",
    )


def test_a_tested_case_torch_cannot_make_is_skipped():
    """A dtype torch has no spec of, or a dtype attr (a GE number), gives no case."""
    dtypes = {"x": ("DT_FLOAT16",), "y": ("DT_FLOAT16",)}
    cann = _op([Input("x")], [Attr("dst_type", "VT_INT", dtype=True)], dtypes=dtypes)
    op = spec.parse("t::op(Tensor x, ScalarType dst_type) -> Tensor")
    complex64 = Given(16, (2,))  # DT_COMPLEX64
    tested = [_tested(((complex64,),), (1,)), _tested(((Given(1, (2,)),),), (0,))]
    assert cases(op, cann.ir, cann, tested=tested) == cases(op, cann.ir, cann)
