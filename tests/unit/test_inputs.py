"""Input specs (opsdk._runtime.inputs) and the cases the harness derives from them
(opsdk.harness.variants.cases): dtypes, sizes and how they grow, named dims, scalars and how
they vary per column. In process; what the cases catch end to end is in
tests/e2e/test_input_specs.py."""

import pytest
import torch

from opsdk._runtime.inputs import (
    BF16,
    BOOL,
    F16,
    F32,
    I32,
    U8,
    U64,
    Dim,
    Fixed,
    OneOf,
    Range,
    Support,
    declare_supported,
    declared,
)
from opsdk._runtime.spec import parse
from opsdk.errors import SpecError
from opsdk.harness.cell import CellFailure
from opsdk.harness.variants.cases import Call, cases, mark_static, tensor_bytes, tensors_of

_LIB = torch.library.Library("t_inputs", "FRAGMENT")
_LIB.define("scaled(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor")
_LIB.define("plain(Tensor x, int n) -> Tensor")
SCALED = torch.ops.t_inputs.scaled.default
SPEC = parse(str(SCALED._schema), validate=False)
PLAIN = parse(str(torch.ops.t_inputs.plain.default._schema), validate=False)

declare_supported(
    SCALED,
    [
        Support(F32(2, 3), F32(2, 3)),
        Support(F16(2, 3), F16(2, 3), alpha=0.5),
        Support(BF16(4, 3), BF16(3)),
        Support(I32(2, 3, value_range=(5, 7)), I32(2, 3)),
        Support(BOOL(2, 1), BOOL(2, 1)),
        Support(F32(), F32()),
        Support(F32(0, 3), F32(0, 3)),
        Support(F32(2, 128, static_dims=(1,)), F32(128, static_dims=(0,))),
    ],
    tolerances={torch.float16: (0.1, 0.1)},
)


def _shapes(case):
    return [[tuple(t.shape) for t in tensors_of(call.args)] for call in case.calls]


def test_each_declared_case_has_its_dtypes_sizes_values_and_scalars():
    found = cases(SPEC, "static", "eager")
    labels = [c.label for c in found]
    assert labels[0] == "F32(2, 3), F32(2, 3)" and labels[-1].startswith("non-contiguous F32")
    dtypes = [tuple(t.dtype for t in tensors_of(c.calls[0].args)) for c in found]
    assert dtypes[:5] == [
        (torch.float32,) * 2,
        (torch.float16,) * 2,
        (torch.bfloat16,) * 2,
        (torch.int32,) * 2,
        (torch.bool,) * 2,
    ]
    assert _shapes(found[2])[0] == [(4, 3), (3,)]  # broadcasting as declared
    assert found[1].calls[0].kwargs == {"alpha": 0.5} and found[0].calls[0].kwargs == {}
    ints = found[3].calls[0].args[0]
    assert int(ints.min()) >= 5 and int(ints.max()) < 7  # the declared value range
    assert _shapes(found[5])[0] == [(), ()] and _shapes(found[6])[0] == [(0, 3), (0, 3)]
    assert all(c.tolerances == {torch.float16: (0.1, 0.1)} for c in found)
    # static mode: one shape per case, fresh values per call
    assert all(len(set(map(tuple, _shapes(c)))) == 1 for c in found)
    first = found[0].calls
    assert not torch.equal(first[0].args[0], first[1].args[0])


def test_non_contiguous_case_keeps_sizes_and_values_in_a_strided_layout():
    strided = cases(SPEC, "static", "eager")[-1]
    x = strided.calls[0].args[0]
    assert x.shape == (2, 3) and not x.is_contiguous()
    assert not x.clone().is_contiguous(), "a copy must keep the layout to reach the kernel"


def test_dynamic_mode_grows_sizes_but_keeps_0_1_and_equal_sizes_equal():
    by_label = {c.label: c for c in cases(SPEC, "dynamic", "eager")}
    assert _shapes(by_label["F32(2, 3), F32(2, 3)"]) == [
        [(2, 3), (2, 3)],
        [(5, 7), (5, 7)],  # 3 = 2 + 1 no longer holds: each size moves by its own amount
        [(8, 11), (8, 11)],
    ]
    assert _shapes(by_label["BOOL(2, 1), BOOL(2, 1)"])[2] == [(8, 1), (8, 1)]
    assert _shapes(by_label["F32(0, 3), F32(0, 3)"])[1] == [(0, 7), (0, 7)]
    assert _shapes(by_label["BF16(4, 3), BF16(3)"])[1] == [(9, 7), (7,)]
    fixed = by_label["F32(2, 128, static_dims=(1,)), F32(128, static_dims=(0,))"]
    assert _shapes(fixed) == [[(2, 128), (128,)], [(5, 128), (128,)], [(8, 128), (128,)]]
    assert not F32(4, static_dims=(0,)).varies and F32(4).varies


def test_columns_leave_out_the_edge_cases_they_cannot_test():
    def labels(shapes, backend):
        return {c.label for c in cases(SPEC, shapes, backend)}

    every = labels("static", "eager")
    assert labels("dynamic", "eager") == labels("dynamic", "opcheck") == every
    assert labels("static", "aot_eager") == every
    # Dynamo specializes sizes 0 and 1: nothing dynamic left in an all-0-dim case
    assert labels("dynamic", "aot_eager") == every - {"F32(), F32()"}
    # TorchAir folds an op with an empty output into a Const: no op node to check
    assert labels("static", "ge") == every - {"F32(0, 3), F32(0, 3)"}
    assert labels("dynamic", "npugraph_ex") == every - {"F32(), F32()"}


def test_without_a_declaration_one_float32_case_derived_from_the_schema():
    [case] = cases(PLAIN, "static", "ge")
    assert case.label == "" and case.tolerances == {}
    assert [(c.args[0].dtype, tuple(c.args[0].shape), c.args[1]) for c in case.calls] == [
        (torch.float32, (2, 3), 2)
    ] * 3


@pytest.mark.parametrize(
    ("support", "complaint"),
    [
        (Support(F32(2), 3), "'y' is a tensor"),
        (Support(F32(2), F32(2), alpha=F32(1)), "'alpha' is not a tensor"),
        (Support(F32(2), F32(2), beta=1.0), "no argument 'beta'"),
        (Support(F32(2)), "give a value for 'y'"),
        (Support(F32(2), F32(2), F32(2), F32(2)), "4 positional values"),
    ],
)
def test_a_declaration_that_contradicts_the_schema_is_refused(support, complaint):
    with pytest.raises(SpecError, match=complaint):
        declare_supported(SCALED, [support])


def test_declaration_needs_an_overload_and_cases():
    with pytest.raises(SpecError, match="op overload"):
        declare_supported(torch.ops.t_inputs.scaled, [Support(F32(2), F32(2))])
    with pytest.raises(SpecError, match="non-empty list"):
        declare_supported(SCALED, [])
    with pytest.raises(SpecError, match="low < high"):
        F32(2, value_range=(1, 1))
    with pytest.raises(SpecError, match="static_dims"):
        F32(2, static_dims=(1,))


def test_the_api_is_importable_from_opsdk():
    import opsdk

    assert (opsdk.Support, opsdk.F32, opsdk.declare_supported) == (Support, F32, declare_supported)
    with pytest.raises(AttributeError):
        opsdk.F128  # noqa: B018


# ----- named dims ---------------------------------------------------------------------

M, K, N = Dim("m", 2), Dim("k", 3), Dim("n", 4)
A, B = Dim("a", 2), Dim("b", 3)
_LIB.define("mm(Tensor a, Tensor b) -> Tensor")
_LIB.define("cat_bias(Tensor[] xs, Tensor bias) -> Tensor")
MM = parse(str(torch.ops.t_inputs.mm.default._schema), validate=False)
CAT_BIAS = parse(str(torch.ops.t_inputs.cat_bias.default._schema), validate=False)
declare_supported(
    torch.ops.t_inputs.mm.default,
    [Support(F32(M, K), F32(K, N)), Support(F32(2, M, K), F32(1, K, N))],
    non_contiguous=False,
)
declare_supported(
    torch.ops.t_inputs.cat_bias.default, [Support([F32(A, 8), F32(B, 8)], F32(A + B))]
)


def _all_shapes(case):
    return [[tuple(t.shape) for t in tensors_of([c.args, c.kwargs])] for c in case.calls]


def test_a_named_dim_is_one_size_everywhere_and_grows_its_own_way():
    matmul, batched = cases(MM, "dynamic", "aot_eager")
    assert matmul.label == "F32(m, k), F32(k, n) with m=2, k=3, n=4"
    assert _all_shapes(matmul) == [[(2, 3), (3, 4)], [(5, 7), (7, 9)], [(8, 11), (11, 14)]]
    # once dims are named, ints stay: the batch of 2 and the broadcast 1
    assert _all_shapes(batched)[2] == [(2, 8, 11), (1, 11, 14)]
    assert _all_shapes(cases(MM, "static", "aot_eager")[0]) == [[(2, 3), (3, 4)]] * 3


def test_a_sum_of_dims_follows_its_terms():
    case, permuted = cases(CAT_BIAS, "dynamic", "ge")
    assert permuted.label == "non-contiguous " + case.label
    assert case.label == "[F32(a, 8), F32(b, 8)], F32(a + b) with a=2, b=3"
    assert _all_shapes(case) == [
        [(2, 8), (3, 8), (5,)],
        [(5, 8), (7, 8), (12,)],
        [(8, 8), (11, 8), (19,)],
    ]
    # per tensor, in tensors_of order: the fixed dims Dynamo is told about
    assert case.calls[0].fixed == ((1,), (1,), ())


def test_dim_arithmetic_and_its_spelling():
    h = Dim("h", 4)
    assert repr(2 * h + 1) == "2*h + 1" and (2 * h + 1).size() == 9
    assert [(A + B).size(step) for step in (0, 1, 2)] == [5, 12, 19]
    assert A + B == B + A and hash(A + B) == hash(B + A) and A + B != A + 1
    assert not F32(M, 128).fixed and Support(F32(M, 128)).tensor_specs()[0].fixed == (1,)
    assert F32(2, 128, static_dims=(1,)).fixed == (1,)


@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        (lambda: Dim("m", 1), "starts at 2 or more"),
        (lambda: Dim("2m", 3), "identifier"),
        (lambda: Dim("m", True), "starts at 2 or more"),
        (lambda: M + -1, "non-negative int"),
        (lambda: 0 * M, "positive int"),
        (lambda: F32(M, 3, static_dims=(0,)), "named dim, which grows"),
        (lambda: F32(2.5), "non-negative ints or Dim"),
        (lambda: Support(F32(Dim("m", 3)), F32(M)), "'m' is declared with sizes 3 and 2"),
        (lambda: Support(F32(A + B), F32(Dim("c", 5))), "a \\+ b and c are both 5"),
    ],
)
def test_a_named_dim_that_cannot_work_is_refused_with_the_fix(make, complaint):
    with pytest.raises(SpecError, match=complaint):
        make()


def test_fixed_sizes_are_marked_static_for_dynamo_in_dynamic_mode_only():
    def marked(shapes):
        call = Call(
            [torch.zeros(2, 2), [torch.zeros(3), torch.zeros(4, 2)]],
            {"b": torch.zeros(2)},
            fixed=((1,), (), (0, 1), ()),
        )
        mark_static(call, shapes)
        return [getattr(t, "_dynamo_static_indices", set()) for t in tensors_of(call.args)]

    assert marked("dynamic") == [{1}, set(), {0, 1}]
    assert marked("mark_static") == [{0, 1}, {0}, {0, 1}]
    assert marked("static") == [set()] * 3


# ----- scalars ------------------------------------------------------------------------

_KNOBS = (
    "(Tensor x, float alpha, int n, SymInt m, Scalar s, int dim, bool flag, str mode, int[] dims)"
)
_LIB.define(f"knobs{_KNOBS} -> Tensor")
_LIB.define(f"declared_knobs{_KNOBS} -> Tensor")
KNOBS = parse(str(torch.ops.t_inputs.knobs.default._schema), validate=False)
DECLARED = torch.ops.t_inputs.declared_knobs.default
DECLARED_SPEC = parse(str(DECLARED._schema), validate=False)
NAMES = [a.name for a in KNOBS.args[1:]]


def _knobs(**values):
    """A Support of the knobs ops: sample values, overridden by ``values``."""
    given = dict(alpha=0.5, n=2, m=2, s=3, dim=1, flag=True, mode="a", dims=[0]) | values
    return Support(F32(2, 3), **given)


declare_supported(
    DECLARED,
    [
        _knobs(
            alpha=OneOf(0.5, 2.0),
            n=Fixed(3),
            m=Range(2, 6),
            dim=Range(0, 2),
            flag=OneOf(True, False),
            dims=OneOf([0], [1]),
        )
    ],
    non_contiguous=False,
)


def _scalars(case):
    return {name: [c.args[i + 1] for c in case.calls] for i, name in enumerate(NAMES)}


def test_eager_varies_numbers_but_not_dims_flags_strings_or_lists():
    [case] = cases(KNOBS, "static", "eager", vary_from=1)
    assert _scalars(case) == {
        "alpha": [0.5, 1.5, 2.5],
        "n": [2, 3, 4],
        "m": [2, 3, 4],
        "s": [0.5, 1.5, 2.5],  # the schema's sample for a Scalar is a float
        "dim": [2, 2, 2],  # named like a dimension
        "flag": [True] * 3,
        "mode": [""] * 3,
        "dims": [[2]] * 3,
    }
    assert [c.changed for c in case.calls] == [
        "",
        "alpha 0.5 -> 1.5, n 2 -> 3, m 2 -> 3, s 0.5 -> 1.5 on call 1",
        "alpha 0.5 -> 2.5, n 2 -> 4, m 2 -> 4, s 0.5 -> 2.5 on call 2",
    ]
    # a column that does not vary (opcheck) keeps every first value
    assert all(not c.changed for c in cases(KNOBS, "static", "opcheck")[0].calls)


def test_declared_values_are_the_only_values():
    [case] = cases(DECLARED_SPEC, "static", "eager", vary_from=1)
    assert _scalars(case) == {
        "alpha": [0.5, 2.0, 0.5],
        "n": [3, 3, 3],
        "m": [2, 4, 5],  # Range(2, 6): low first, then inside [low, high)
        "s": [3, 4, 5],
        "dim": [0, 1, 1],
        "flag": [True, False, True],
        "mode": ["a"] * 3,
        "dims": [[0], [1], [0]],
    }
    assert [Range(0.0, 1.0).at(i) for i in range(5)] == [0.0, 0.5, 0.75, 0.25, 0.0]


@pytest.mark.parametrize("shapes", ["dynamic", "mark_static"])
def test_compiled_columns_vary_only_the_symbolic_ints_a_graph_takes_as_inputs(shapes):
    [case] = cases(DECLARED_SPEC, shapes, "aot_eager", vary_from=1)
    varied = {
        name: values for name, values in _scalars(case).items() if len(set(map(repr, values))) > 1
    }
    assert varied == {"m": [2, 4, 5], "s": [3, 4, 5]}  # SymInt and an int Scalar
    # npugraph_ex changes them on its last call only
    [case] = cases(DECLARED_SPEC, shapes, "npugraph_ex", steps=(0, 0, 0), vary_from=2)
    assert (
        _scalars(case)["m"] == [2, 2, 4] and case.calls[2].changed == "m 2 -> 4, s 3 -> 4 on call 2"
    )


def test_a_static_graph_bakes_every_scalar_in_so_none_varies():
    [case] = cases(DECLARED_SPEC, "static", "aot_eager", vary_from=1)
    assert all(len(set(map(repr, values))) == 1 for values in _scalars(case).values())


def test_a_failure_on_a_call_with_changed_scalars_says_what_changed():
    [case] = cases(KNOBS, "static", "eager", vary_from=1)
    with pytest.raises(CellFailure) as failed, case.calls[1].noted():
        raise CellFailure("eager", "call 1: output: values differ")
    assert failed.value.layer == "eager"
    assert str(failed.value).startswith(
        "call 1: output: values differ (the harness changed alpha 0.5 -> 1.5, n 2 -> 3, "
    )
    assert "Fixed(...), OneOf(...), Range(...)" in str(failed.value)
    with pytest.raises(CellFailure, match=r"^call 0: boom$"), case.calls[0].noted():
        raise CellFailure("eager", "call 0: boom")


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"alpha": Range(0, 1)}, r"'alpha' is a float but Range\(0, 1\) draws ints: write "
         r"Range\(0.0, 1.0\)"),
        ({"n": Range(0.0, 2.0)}, "'n' is an int: give Range.* int bounds"),
        ({"flag": Range(0, 2)}, "'flag' is a bool: a Range needs a number argument"),
        ({"dims": [OneOf(0, 1)]}, "declare the values of the whole list 'dims'"),
        ({"n": M}, "'n' is not a tensor"),
    ],
)  # fmt: skip
def test_a_scalar_declaration_the_argument_cannot_take_is_refused(values, complaint):
    with pytest.raises(SpecError, match=complaint):
        declare_supported(DECLARED, [_knobs(**values)])


@pytest.mark.parametrize(
    ("make", "complaint"),
    [
        (lambda: Range(1, 1), "low < high"),
        (lambda: Range(True, 2), "finite numbers"),
        (lambda: Range(0.0, float("inf")), "finite numbers"),
        (lambda: OneOf(), "needs the values"),
        (lambda: OneOf(F32(2)), "give plain values"),
    ],
)
def test_a_scalar_spec_without_values_is_refused(make, complaint):
    with pytest.raises(SpecError, match=complaint):
        make()


_LIB.define("picky(Tensor x, int groups) -> Tensor")


def _picky(x, groups):
    if x.shape[-1] % groups:
        raise RuntimeError("groups must divide the last dim")
    return x.clone()


_LIB.impl("picky", _picky, "CPU")
PICKY = parse(str(torch.ops.t_inputs.picky.default._schema), validate=False)
declare_supported(torch.ops.t_inputs.picky.default, [Support(F32(2, 4), 2)], non_contiguous=False)


def test_a_changed_scalar_the_reference_refuses_keeps_its_declared_value():
    [case] = cases(PICKY, "static", "eager", vary_from=1)
    # 2 -> 3 does not divide 4: kept at 2; 2 -> 4 does, so it is tried
    assert [c.args[1] for c in case.calls] == [2, 2, 4]
    assert [bool(c.changed) for c in case.calls] == [False, False, True]


def _bytes_of(values) -> bytes:
    return torch.tensor(values).numpy().tobytes()


def test_tensor_bytes_is_bitwise_so_a_nan_equals_itself():
    t = torch.tensor([float("nan"), 1.0])
    assert not torch.equal(t, t)
    assert tensor_bytes(t) == tensor_bytes(t.clone()) == _bytes_of([float("nan"), 1.0])
    assert tensor_bytes(torch.tensor(2.0)) == _bytes_of(2.0)  # a 0-dim tensor too


@pytest.mark.parametrize(
    "view, values",
    [
        (torch.tensor([1 + 2j, 3 - 4j]).conj(), [1 - 2j, 3 + 4j]),
        (torch._neg_view(torch.tensor([1.0, 2.0])), [-1.0, -2.0]),
        (torch.tensor([[1.0, 2.0], [3.0, 4.0]]).T, [[1.0, 3.0], [2.0, 4.0]]),
        (torch.arange(6.0)[::2], [0.0, 2.0, 4.0]),
    ],
    ids=["conj", "neg", "transposed", "strided"],
)
def test_tensor_bytes_are_the_bytes_of_a_views_values_not_of_its_storage(view, values):
    assert tensor_bytes(view) == _bytes_of(values)


def test_unsigned_tensors_take_values_their_dtype_holds():
    """An unsigned tensor's default values are non-negative (a signed range would wrap)."""
    lib = torch.library.Library("t_inputs_u", "FRAGMENT")
    lib.define("masked(Tensor x, Tensor mask) -> Tensor")
    op = torch.ops.t_inputs_u.masked.default
    declare_supported(op, [Support(F32(64), U8(64)), Support(F32(64), U64(64))])
    for case in cases(parse(str(op._schema), validate=False), "static", "eager"):
        mask = case.calls[0].args[1].to(torch.float64)
        assert int(mask.min()) >= 0 and int(mask.max()) < 10, case.label


_LIB.define('gapped(Tensor x, str mode="a", bool flag=False) -> Tensor')
GAPPED = torch.ops.t_inputs.gapped.default
declare_supported(GAPPED, [Support(F32(2, 3), flag=True)])


def test_an_argument_after_one_left_to_its_default_is_passed_by_keyword():
    """Positional, flag would land in mode's place (as CANN's attrs, positional after the
    tensors, do when a Support gives a later one only)."""
    (case, *_) = cases(parse(str(GAPPED._schema), validate=False), "static", "eager")
    call = case.calls[0]
    assert len(call.args) == 1 and call.kwargs == {"flag": True}


_LIB.define("twice(Tensor x) -> Tensor")
TWICE = torch.ops.t_inputs.twice.default
declare_supported(TWICE, [Support(F32(2, 3))])


def test_a_second_declaration_for_an_op_is_refused_and_the_first_stands():
    """It used to replace the first, silently."""
    with pytest.raises(SpecError) as err:
        declare_supported(TWICE, [Support(F16(4))])
    message = str(err.value)
    assert message.startswith(f"declare_supported(t_inputs::twice) at {__file__}:")
    assert f"its inputs are declared already, at {__file__}:" in message
    assert message.endswith("give all its cases in that one declare_supported([...])")
    assert [c.label for c in cases(parse(str(TWICE._schema)), "static", "eager")][0] == "F32(2, 3)"


def test_the_same_declaration_run_again_replaces_it_as_a_reimported_module_does():
    _LIB.define("again(Tensor x) -> Tensor")
    for dims in ((2,), (3,)):  # one call, run twice
        declare_supported(torch.ops.t_inputs.again.default, [Support(F32(*dims))])
    assert declared("t_inputs::again").cases[0].label == "F32(3)"
