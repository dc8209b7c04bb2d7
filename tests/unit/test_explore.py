"""The exploration of an op's input space without a compiler (opsdk.cann.explore): the
cases a definition yields, the verdict on two answers, shrinking, and four planted
disagreements between a fake and a C++ stand-in (Python callables answering as the
compiled functions do) that each live in one corner only: a rank, a mixed dtype row, an
odd size at a split dim, an absent optional input. Each is found and shrunk; its correct
twin gives no finding; a C++ wrong only at the -1 GE passes for a symbolic dim is found
in the dynamic form."""

import dataclasses
import itertools

import pytest
import torch

from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann._model import CannOp
from opsdk.cann.explore import SYMBOLIC, explore
from opsdk.cann.explore.cases import RANKS, Case, Tensor, generate, rows
from opsdk.cann.explore.judge import (
    AGREE,
    BOTH_REFUSE,
    CPP_REFUSES,
    DIFFER,
    FAKE_REFUSES,
    classify,
)
from opsdk.cann.explore.torch_side import TorchOp
from opsdk.cann.infer.call import Crashed, Inferred

F16, F32 = 1, 0  # GE's numbers


def _op(optional=False, fixed_format=None) -> CannOp:
    inputs = [Input("x1"), Input("x2")] + ([Input("bias", "optional")] if optional else [])
    ir = IrDef("Pair", inputs=inputs, outputs=[Output("y")], attrs=[Attr("keep", "VT_BOOL", False)])
    dtypes = {
        "x1": ("DT_FLOAT16", "DT_FLOAT", "DT_FLOAT16"),
        "x2": ("DT_FLOAT16", "DT_FLOAT", "DT_FLOAT"),
    }
    formats = {n: (fixed_format,) * 3 for n in dtypes} if fixed_format else {}
    return CannOp(ir, dtypes, formats)


def _answer(shapes, dtypes, refused=False) -> Inferred:
    status = 0xFFFFFFFF if refused else 0
    log = ("E pair_infershape.cpp:12 refused",) if refused else ()
    return Inferred(status, tuple(shapes), 0, tuple(dtypes), log, len(shapes) or 1)


def _cpp(rule):
    """A C++ stand-in: ``rule(x1, x2, bias)`` gives (shape, GE dtype value) or None."""

    def infer(case):
        x1, x2, *rest = (i[0] if i else None for i in case.inputs)
        said = rule(x1, x2, rest[0] if rest else None)
        if said is None:
            return _answer([()], [0], refused=True)
        return _answer([said[0]], [said[1]])

    return infer


def _fake(rule):
    def fake(case):
        x1, x2, *rest = (i[0] if i else None for i in case.inputs)
        return [rule(x1, x2, rest[0] if rest else None)]

    return fake


_GE = {"DT_FLOAT16": F16, "DT_FLOAT": F32}


def _same(x1, x2, bias):
    return x1.shape, _GE[x1.dtype]


def _fake_same(x1, x2, bias):
    return x1.shape, x1.dtype


def test_the_definitions_structure_comes_first_every_row_rank_and_optional():
    cann = _op(optional=True)
    first = list(itertools.islice(generate(cann), 30))
    assert len(set(first)) == len(first)
    dtypes = {(c.inputs[0][0].dtype, c.inputs[1][0].dtype) for c in first}
    assert ("DT_FLOAT16", "DT_FLOAT") in dtypes  # the mixed row
    assert {len(c.inputs[0][0].shape) for c in first} >= set(RANKS)
    assert any(c.inputs[2] == () for c in first) and any(c.inputs[2] for c in first)
    assert {c.attrs for c in first} == {(False,), (True,)}
    assert rows(cann)[2] == {"x1": "DT_FLOAT16", "x2": "DT_FLOAT", "bias": "DT_FLOAT"}


def test_a_reg_op_s_sets_give_mixed_rows_a_shared_symbol_stays_together():
    """A REG_OP's lists are sets, each checked alone: beside its aligned rows come the
    mixed ones (every combination while few), tensors of one DATATYPE symbol alike."""
    ir = IrDef("Norm", inputs=[Input("x"), Input("gamma"), Input("beta")], outputs=[Output("y")])
    both = ("DT_FLOAT16", "DT_FLOAT")
    sets = CannOp(ir, {"x": both, "gamma": both, "beta": both}, rows=False)
    found = {tuple(r.values()) for r in rows(sets)}
    assert len(found) == 8 and ("DT_FLOAT16", "DT_FLOAT", "DT_FLOAT") in found
    tied = CannOp(sets.ir, sets.dtypes, type_vars={"gamma": "T", "beta": "T"}, rows=False)
    assert {tuple(r.values()) for r in rows(tied)} == {(x, g, g) for x in both for g in both}
    assert len(rows(dataclasses.replace(sets, rows=True))) == 2  # an OpDef's: its columns


def _norm(with_anchor: bool, fake_dtype_of: str):
    """A norm: ``gamma`` 1-D, ``x``'s last dim (the C++ and the fake refuse else); the C++
    gives ``mean`` x's dtype. Cases of alike tensors are all refused: a disagreement
    lives only at a valid case's shapes, in a mixed row."""
    ir = IrDef("Norm", inputs=[Input("x"), Input("gamma")], outputs=[Output("mean")])
    cann = CannOp(ir, {"x": ("DT_FLOAT16", "DT_FLOAT16"), "gamma": ("DT_FLOAT16", "DT_FLOAT")})

    def fits(x1, x2, bias):
        return x2.shape == x1.shape[-1:] and len(x1.shape) == 2

    def cpp(x1, x2, bias):
        return ((x1.shape[0],), _GE[x1.dtype]) if fits(x1, x2, bias) else None

    def fake(x1, x2, bias):
        if not fits(x1, x2, bias):
            raise ValueError("gamma is not x's last dim")
        return (x1.shape[0],), {"x": x1, "gamma": x2}[fake_dtype_of].dtype

    valid = Case(((Tensor("DT_FLOAT16", (2, 4)),), (Tensor("DT_FLOAT16", (4,)),)), ())
    return explore(cann, _cpp(cpp), _fake(fake), cases=300, anchors=[valid] if with_anchor else [])


def test_a_mixed_row_at_a_valid_case_s_shapes_is_found_from_its_anchor_its_twin_passes():
    """A norm's mean of gamma's dtype where the C++ says x's (torch_npu's
    npu_group_norm_silu): tensors of different shapes, so found only at the shapes of
    a case known valid (the declared one, an anchor), in the definition's mixed row."""
    (finding,) = _norm(True, "gamma").findings
    assert finding.verdict.kind == DIFFER and finding.verdict.what == "dtype", finding
    assert [i[0].dtype for i in finding.case.inputs] == ["DT_FLOAT16", "DT_FLOAT"]
    assert _norm(False, "gamma").findings == []  # no valid shapes: set aside
    assert _norm(True, "x").findings == []


def test_a_fixed_format_keeps_its_rank_and_the_seed_makes_it_deterministic():
    cann = _op(fixed_format="NCHW")
    cases = list(itertools.islice(generate(cann, seed=3), 300))
    assert {len(c.inputs[0][0].shape) for c in cases} == {4}
    again = list(itertools.islice(generate(cann, seed=3), 300))
    other = list(itertools.islice(generate(cann, seed=4), 300))
    assert cases == again and cases != other


def test_sizes_one_odd_even_and_large_are_met_at_each_dim():
    cann = _op()
    cases = list(itertools.islice(generate(cann, anchors=[next(generate(cann))]), 200))
    for back in (1, 2):
        met = {c.inputs[0][0].shape[-back] for c in cases if len(c.inputs[0][0].shape) == 2}
        assert {1, 3, 4, 64} <= met, (back, met)


def test_the_verdicts():
    ok = _answer([(4, 4)], [F16])
    assert classify(ok, [((4, 4), "DT_FLOAT16")]).kind == AGREE
    refused = _answer([()], [0], refused=True)
    assert classify(refused, ValueError("no")).kind == BOTH_REFUSE
    verdict = classify(refused, [((4, 4), "DT_FLOAT16")])
    assert verdict.kind == CPP_REFUSES and "pair_infershape.cpp:12 refused" in verdict.detail
    assert (
        classify(Crashed("crashed (signal 11: SIGSEGV)", "InferShape"), [((4,), "DT_FLOAT")]).kind
        == CPP_REFUSES
    )
    fake_refuses = classify(ok, RuntimeError("x must be 2-D"))
    assert fake_refuses.kind == FAKE_REFUSES and "x must be 2-D" in fake_refuses.detail
    rank = classify(ok, [((4, 4, 1), "DT_FLOAT16")])
    assert (rank.kind, rank.what) == (DIFFER, "shape")
    dtype = classify(ok, [((4, 4), "DT_FLOAT")])
    assert (dtype.kind, dtype.what, dtype.output) == (DIFFER, "dtype", 0)
    lost = classify(_answer([(4, 4)], [F16]), [((-1, 4), "DT_FLOAT16")], compile=True)
    assert (lost.kind, lost.what) == (DIFFER, "unknown-dim")
    kept = classify(_answer([(-1, -1)], [F16]), [((-1, 4), "DT_FLOAT16")], compile=True)
    assert kept.kind == AGREE  # a conservative C++, or a size the fake fixed by a guard
    alike = classify(_answer([(-1, 4)], [F16]), [((-1, 4), "DT_FLOAT16")], compile=True)
    assert alike.kind == AGREE


def _rank_cpp(x1, x2, bias):  # the C++ takes ranks up to 4
    return None if len(x1.shape) > 4 else (x1.shape, _GE[x1.dtype])


def _mixed_cpp(x1, x2, bias):  # the output is x2's dtype
    return x1.shape, _GE[x2.dtype]


def _split_cpp(x1, x2, bias):  # the last dim split in halves, the first one larger
    return (*x1.shape[:-1], (x1.shape[-1] + 1) // 2), _GE[x1.dtype]


def _split_fake(x1, x2, bias):
    return (*x1.shape[:-1], x1.shape[-1] // 2), x1.dtype


def _split_twin(x1, x2, bias):
    return (*x1.shape[:-1], (x1.shape[-1] + 1) // 2), x1.dtype


def _bias_cpp(x1, x2, bias):  # without a bias the output keeps a trailing 1
    return (x1.shape if bias else (*x1.shape, 1)), _GE[x1.dtype]


def _bias_twin(x1, x2, bias):
    return (x1.shape if bias else (*x1.shape, 1)), x1.dtype


def _rank_twin(x1, x2, bias):
    if len(x1.shape) > 4:
        raise ValueError("x1 has more than 4 dims")
    return x1.shape, x1.dtype


def _mixed_twin(x1, x2, bias):
    return x1.shape, x2.dtype


def _rank5(case):
    return len(case.inputs[0][0].shape) == 5


def _mixed(case):
    return case.inputs[0][0].dtype != case.inputs[1][0].dtype


def _one(case):
    return case.inputs[0][0].shape == (1,)


def _no_bias(case):
    return case.inputs[2] == () and _one(case)


@pytest.mark.parametrize(
    ("cpp", "fake", "twin", "optional", "kind", "smallest"),
    [
        (_rank_cpp, _fake_same, _rank_twin, False, CPP_REFUSES, _rank5),
        (_mixed_cpp, _fake_same, _mixed_twin, False, DIFFER, _mixed),
        (_split_cpp, _split_fake, _split_twin, False, DIFFER, _one),
        (_bias_cpp, _fake_same, _bias_twin, True, DIFFER, _no_bias),
    ],
    ids=["rank", "mixed-row", "odd-split", "absent-optional"],
)
def test_a_planted_disagreement_is_found_and_shrunk_its_twin_passes(
    cpp, fake, twin, optional, kind, smallest
):
    cann = _op(optional=optional)
    done = explore(cann, _cpp(cpp), _fake(fake), cases=300)
    assert [f.verdict.kind for f in done.findings] == [kind], done.findings
    (finding,) = done.findings
    assert smallest(finding.case), finding.case
    assert finding.case.size() <= finding.met.size()
    twin_done = explore(cann, _cpp(cpp), _fake(twin), cases=300)
    assert twin_done.findings == [] and twin_done.cases == 300, twin_done.kinds


def test_the_torch_side_asks_the_fake_and_writes_a_pasteable_support():
    lib = torch.library.Library("opsdk_explore_t", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("pair(Tensor x1, Tensor x2, Tensor? bias=None, *, bool keep=False) -> Tensor")
    lib.impl("pair", lambda x1, x2, bias=None, keep=False: x1.clone(), "Meta")
    op = torch.ops.opsdk_explore_t.pair.default
    cann = _op(optional=True)
    side = TorchOp(op, cann.ir, device="meta")
    case = next(c for c in generate(cann) if c.inputs[2] == () and len(c.inputs[0][0].shape) == 2)
    assert side.fake(case) == [((4, 4), "DT_FLOAT16")]
    assert side.support(case) == "Support(F16(4, 4), F16(4, 4))"
    given = next(c for c in generate(cann) if c.inputs[2] and c.attrs == (True,))
    text = side.support(given)
    assert text == "Support(F16(4, 4), F16(4, 4), F32(4, 4), keep=True)"
    from opsdk import inputs

    assert isinstance(eval(text, vars(inputs)), inputs.Support)  # noqa: S307 - pasteable


def test_a_cpp_refusing_every_case_at_the_attrs_refuses_the_attrs_not_a_finding():
    """A derived case's invented attr values the C++ refuses whatever the sizes."""
    cann = _op()
    refuse_all = _cpp(lambda x1, x2, bias: None)
    done = explore(cann, refuse_all, _fake(_fake_same), cases=100)
    assert done.findings == [] and done.kinds.get(CPP_REFUSES, 0) > 10, done.kinds


def _traced(rule):
    """A stand-in for ``TorchOp.traced``: every size but 1 symbolic (-1), ``rule`` on it."""

    def traced(case):
        dynamic = Case(
            tuple(
                tuple(Tensor(t.dtype, tuple(-1 if n > 1 else n for n in t.shape)) for t in i)
                for i in case.inputs
            ),
            case.attrs,
        )
        return _fake(rule)(dynamic), dynamic

    return traced


def _half_fake(x1, x2, bias):  # the last dim's larger half, symbolic when it is
    last = x1.shape[-1]
    return (*x1.shape[:-1], -1 if last < 0 else (last + 1) // 2), x1.dtype


def _half_cpp_kept(x1, x2, bias):
    last = x1.shape[-1]
    return (*x1.shape[:-1], -1 if last < 0 else (last + 1) // 2), _GE[x1.dtype]


def _known_cpp(x1, x2, bias):  # refuses a -1 GE passes for a symbolic dim
    return None if -1 in x1.shape else _half_cpp_kept(x1, x2, bias)


@pytest.mark.parametrize(
    ("cpp", "kind"),
    [(_split_cpp, DIFFER), (_known_cpp, CPP_REFUSES)],
    ids=["size-where-minus-1", "refuses-minus-1"],
)
def test_a_cpp_wrong_only_at_minus_1_is_found_in_the_dynamic_form_its_twin_passes(cpp, kind):
    """Every static case agrees; GE's dynamic form (-1 at the symbolic dims) tells them."""
    cann = _op()
    done = explore(cann, _cpp(cpp), _fake(_half_fake), cases=300, traced=_traced(_half_fake))
    assert [(f.verdict.kind, f.dynamic) for f in done.findings] == [(kind, True)], done.kinds
    assert done.kinds["agree"] == 300 - SYMBOLIC and done.cases == 300, done.kinds
    assert done.findings[0].case.inputs[0][0].shape == (2,)  # the smallest symbolic size
    twin = explore(
        cann, _cpp(_half_cpp_kept), _fake(_half_fake), cases=300, traced=_traced(_half_fake)
    )
    assert twin.findings == [] and twin.kinds["agree (dynamic)"] == SYMBOLIC, twin.kinds
    static = explore(cann, _cpp(cpp), _fake(_half_fake), cases=300)
    assert static.findings == [], static.kinds  # the static form alone misses it


def test_the_torch_side_traces_symbolic_sizes_as_dynamo_does():
    """Equal sizes share a symbol, a 1 stays fixed, a size the fake guards on is fixed."""
    lib = torch.library.Library("opsdk_explore_sym", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("half(Tensor x1, Tensor x2, Tensor? bias=None, *, bool keep=False) -> Tensor")

    def half(x1, x2, bias=None, keep=False):
        torch._check(x2.shape[0] == 4)  # guards x2's first size: specialized to 4
        return x1.new_empty((x1.shape[0], (x1.shape[1] + 1) // 2))

    lib.impl("half", half, "Meta")
    side = TorchOp(torch.ops.opsdk_explore_sym.half.default, _op(optional=True).ir, "meta")

    def case(x1, x2):
        return Case(((Tensor("DT_FLOAT16", x1),), (Tensor("DT_FLOAT16", x2),), ()), (False,))

    said, dynamic = side.traced(case((3, 5), (4, 1)))
    assert said == [((-1, -1), "DT_FLOAT16")]
    assert dynamic == case((-1, -1), (4, 1))
    said, dynamic = side.traced(case((3, 4), (4, 1)))  # x1's 4 is x2's symbol: fixed too
    assert said == [((-1, 2), "DT_FLOAT16")] and dynamic == case((-1, 4), (4, 1))


def test_a_declared_node_becomes_a_case_to_explore_around():
    """``case_of``: GE's inputs (a value-depend one's host data read back) and attrs (a
    list as a tuple: a case is hashed) as a case, the inverse of what the C++ is sent."""
    import struct

    from opsdk.cann.explore import _given, case_of
    from opsdk.cann.infer.call import Given

    sizes = Given(3, (2,), struct.pack("<2i", 5, 7))  # DT_INT32
    case = case_of([[Given(F16, (2, 3))], [sizes], []], [[1, 2], 0.5])
    x, n = Tensor("DT_FLOAT16", (2, 3)), Tensor("DT_INT32", (2,), (5, 7))
    assert case == Case(((x,), (n,), ()), ((1, 2), 0.5)) and hash(case)
    assert _given(n) == sizes


def test_a_fixed_argument_wins_over_an_attr_of_its_name_which_stays_pinned():
    """torch_npu numbers a dtype its own way (``dst_type=296``) where the node's attr has
    GE's (40): the audit fixes the argument at the call's value, the attr at the node's."""
    lib = torch.library.Library("opsdk_explore_fixed", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("quant(Tensor x, int dst_type=1) -> Tensor")
    seen = []
    lib.impl("quant", lambda x, dst_type=1: seen.append(dst_type) or x.clone(), "Meta")
    ir = IrDef(
        "Quant", inputs=[Input("x")], outputs=[Output("y")],
        attrs=[Attr("dst_type", "VT_INT", 40, dtype=True)], fixed_args={"dst_type": 296},
    )  # fmt: skip
    side = TorchOp(torch.ops.opsdk_explore_fixed.quant.default, ir, device="meta")
    assert side.pinned == frozenset({"dst_type"})
    side.fake(Case(((Tensor("DT_FLOAT16", (2,)),),), (40,)))
    assert seen == [296]


def test_an_unbound_argument_is_said_without_a_fix_its_caller_owns():
    """The trial's torch_npu note asked to "name it in IrDef.arg_names", which a wheel's
    library has none of: TorchOp says what is unbound; opsdk check's infer adds the
    IrDef fix, the audit's note says the converter binds it to nothing."""
    from opsdk.cann.explore.torch_side import Unbound

    lib = torch.library.Library("opsdk_explore_unbound", "FRAGMENT")  # noqa: TID251 - a test op
    lib.define("scaled(Tensor x, float scale) -> Tensor")
    ir = IrDef("Scaled", inputs=[Input("x")], outputs=[Output("y")])
    with pytest.raises(Unbound, match="argument scale is no input or attr of Scaled$"):
        TorchOp(torch.ops.opsdk_explore_unbound.scaled.default, ir, device="meta")
