"""The specs `opsdk new --from-cann` writes are held to the op's InferShape (``accepts``,
here a Python stand-in for the compiled C++): each dtype row, the case giving optional
inputs, host values and required attrs, static and dynamic; what it refuses is changed
or left out and said, never written as if valid. Without ``accepts`` the guesses stay."""

import pytest

from opsdk._runtime import spec
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import CannOp, held
from opsdk.cann.specs import GIVEN, REFUSED_GIVEN, REFUSED_ROWS, cases


def _op(inputs, attrs=(), dtypes=None):
    names = [i.name for i in inputs]
    dtypes = dtypes or {n: ("DT_FLOAT16", "DT_FLOAT") for n in [*names, "y"]}
    return CannOp(IrDef("Op", inputs, [Output("y")], attrs), dtypes, {})


def _cases(cann, schema, accepts):
    return cases(spec.parse(f"t::op{schema}"), cann.ir, cann, accepts)


def _said(case: str) -> str:
    """The comment lines above a case, joined as one text."""
    return " ".join(line.removeprefix("# ") for line in case.splitlines()[:-1])


def _asking(rule):
    """An ``accepts`` that records what it was asked."""

    def accepts(shapes, values, dtypes):
        accepts.asked += 1
        return rule(shapes, values, dtypes)

    accepts.asked = 0
    return accepts


def _within(axes, rank: int) -> bool:
    return len(set(axes)) == len(axes) and all(0 <= a < rank for a in axes)


def test_value_axes_within_the_rank_and_an_attr_list_of_the_length_the_cpp_needs():
    """The guesses (axes of 2s, a one-value window) are out of range / short; the C++
    also takes only 3-D x."""
    cann = _op(
        [Input("x"), Input("axes", value_depend=True)],
        [Attr("window", "VT_LIST_INT")],
        {"x": ("DT_FLOAT",), "axes": ("DT_INT64",), "y": ("DT_FLOAT",)},
    )
    schema = "(Tensor x, SymInt[] axes, int[] window) -> Tensor"

    def rule(shapes, values, dtypes):
        rank = len(shapes["x"])
        return rank == 3 and _within(values["axes"], rank) and len(values["window"]) == 2

    assert _cases(cann, schema, _asking(rule)) == ("Support(F32(2, 3, 4), [2, 1, 0], [1, 1])",)
    assert _cases(cann, schema, None) == ("Support(F32(2, 3), [2, 2], [1])",)  # the guess


def test_a_scalar_shaped_input_gets_0_d_and_a_perm_is_a_permutation():
    cann = _op([Input("x"), Input("scale")], [Attr("perm", "VT_LIST_INT")])
    schema = "(Tensor x, Tensor scale, int[] perm) -> Tensor"

    def rule(shapes, values, dtypes):
        return shapes["scale"] == () and sorted(values["perm"]) == list(range(len(shapes["x"])))

    assert _cases(cann, schema, _asking(rule))[0] == "Support(F16(4, 4), F16(), [1, 0])"
    assert _cases(cann, schema, None)[0] == "Support(F16(4, 4), F16(4, 4), [1, 0])"


def test_a_dim_the_cpp_needs_fixed_stays_in_dynamic_mode_and_alike_dims_grow_together():
    """The grid's last dim must be 2 (-1 at compile time is refused); x and grid must
    agree on their first dims: those grow, together."""
    cann = _op([Input("x"), Input("grid")])
    schema = "(Tensor x, Tensor grid) -> Tensor"

    def rule(shapes, values, dtypes):
        x, grid = shapes["x"], shapes["grid"]
        return len(x) == len(grid) == 2 and grid[-1] == 2 and x[0] == grid[0]

    assert _cases(cann, schema, _asking(rule))[0] == (
        "Support(F16(4, 4), F16(4, 2, static_dims=(1,)))"
    )


def test_one_position_of_a_size_stays_when_the_cpp_needs_only_it_fixed():
    """Every dim is 4; the C++ needs x and g alike and their last dim 4: the first dims
    grow (together), the last ones stay."""
    cann = _op([Input("x"), Input("g")])

    def rule(shapes, values, dtypes):
        return shapes["x"] == shapes["g"] and shapes["x"][-1:] == (4,)

    assert _cases(cann, "(Tensor x, Tensor g) -> Tensor", _asking(rule))[0] == (
        "Support(F16(4, 4, static_dims=(1,)), F16(4, 4, static_dims=(1,)))"
    )


def test_an_int_attr_whose_default_the_cpp_refuses_is_written_off_it():
    """SplitV's ``num_split=0``: the C++ needs it positive and as many sizes; at rank 3
    the sizes' guess is one long (a resize's spatial dims), one change away."""
    cann = _op(
        [Input("x"), Input("sizes", value_depend=True)],
        [Attr("num_split", "VT_INT", 0)],
        {"x": ("DT_FLOAT",), "sizes": ("DT_INT64",), "y": ("DT_FLOAT",)},
    )
    schema = "(Tensor x, SymInt[] sizes, int num_split=0) -> Tensor"

    def rule(shapes, values, dtypes):
        return values["num_split"] == len(values["sizes"]) == 1

    assert _cases(cann, schema, _asking(rule)) == ("Support(F32(2, 3, 4), [2], num_split=1)",)
    assert _cases(cann, schema, None) == ("Support(F32(2, 3), [2, 2])",)


def test_a_host_list_the_cpp_refuses_stepped_is_fixed():
    """The harness steps an int list between dynamic calls ([2, 2] -> [3, 3]); a C++
    taking only 2s keeps it ``Fixed``; one taking any stays free."""
    cann = _op(
        [Input("x"), Input("sizes", value_depend=True)],
        dtypes={"x": ("DT_FLOAT",), "sizes": ("DT_INT64",), "y": ("DT_FLOAT",)},
    )
    schema = "(Tensor x, SymInt[] sizes) -> Tensor"
    strict = _asking(lambda shapes, values, dtypes: set(values["sizes"]) == {2})
    assert _cases(cann, schema, strict) == ("Support(F32(2, 3), Fixed([2, 2]))",)
    loose = _asking(lambda shapes, values, dtypes: True)
    assert _cases(cann, schema, loose) == ("Support(F32(2, 3), [2, 2])",)


def test_a_row_the_cpp_refuses_is_left_out_and_said():
    cann = _op([Input("x"), Input("y2")])
    schema = "(Tensor x, Tensor y2) -> Tensor"
    refuse_f16 = _asking(lambda shapes, values, dtypes: dtypes["x"] != "DT_FLOAT16")
    (case,) = _cases(cann, schema, refuse_f16)
    assert case.endswith("\nSupport(F32(4, 4), F32(4, 4))")
    assert _said(case) == f"{REFUSED_ROWS}: F16"


def test_the_given_case_finds_sizes_for_its_optional_input_or_is_left_out_and_said():
    """The rows' sizes (g's last dim 2) kept, the bias given one size of its own."""
    cann = _op([Input("x"), Input("g"), Input("bias", "optional")])
    schema = "(Tensor x, Tensor g, Tensor? bias) -> Tensor"

    def rule(shapes, values, dtypes):
        bias = shapes.get("bias", shapes["x"][-1:])
        return shapes["g"][-1:] == (2,) and bias == shapes["x"][-1:]

    found = _cases(cann, schema, _asking(rule))
    assert found[-1] == f"# {GIVEN}\nSupport(F16(4, 4), F16(4, 2, static_dims=(1,)), F16(4))"
    never = _cases(cann, schema, _asking(lambda shapes, values, dtypes: "bias" not in shapes))
    assert len(never) == 2 and _said(never[0]) == REFUSED_GIVEN
    assert all("F16(4, 4), F16(4, 4))" not in c for c in never)


def test_a_search_is_bounded_and_ends_when_the_cpp_crashes_on_everything():
    attrs = [Attr("a", "VT_LIST_INT"), Attr("b", "VT_INT"), Attr("c", "VT_LIST_INT")]
    cann = _op([Input("x"), Input("g")], attrs)
    refuse = _asking(lambda shapes, values, dtypes: False)
    _cases(cann, "(Tensor x, Tensor g, int[] a, int b, int[] c) -> Tensor", refuse)
    assert refuse.asked == held.LIMIT  # over both rows' searches and the given case's
    crash = _asking(lambda shapes, values, dtypes: None)  # the C++ crashes on anything
    _cases(cann, "(Tensor x, Tensor g, int[] a, int b, int[] c) -> Tensor", crash)
    assert crash.asked == held.CRASHES


@pytest.mark.parametrize(
    ("name", "first", "rank", "expected"),
    [
        ("axes", [2, 2, 2], 3, [[2, 2, 2], [2, 1, 0], [0, 1, 2], [2], [0]]),
        ("perm", [1, 0], 2, [[1, 0], [0, 1], [1], [0]]),
        ("window", [1], 2, [[1], [2], [1, 1], [2, 2], [1, 1, 1, 1], [2, 2, 2, 2]]),
        ("k", 1, 2, [1, 0, 2, -1]),
        ("num_split", 0, 2, [0, 1, 2, -1]),
        ("mode", "mean", 2, ["mean"]),
    ],
)
def test_the_values_tried(name, first, rank, expected):
    assert held.values(name, first, rank) == expected
