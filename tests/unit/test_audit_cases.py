"""The audit's derived cases reach optional inputs both ways (issue 39 item 4): a
schema-derived case gives every optional input, so one case more per such input leaves
it out; a CANN definition's cases keep, within the audit's two, a row (optional inputs
absent) and the case that gives them."""

import torch

from opsdk._runtime import inputs
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.audit import cases as audit_cases
from opsdk.cann import CannOp

_LIB = torch.library.Library("audit_cases_t", "DEF")  # noqa: TID251 - the test's own op
_LIB.define("biased(Tensor x, Tensor? bias=None, Tensor? scale=None, Tensor? shift=None) -> Tensor")
OP = torch.ops.audit_cases_t.biased.default


def test_a_derived_case_gets_one_more_per_optional_input_left_out():
    given = inputs.Support(inputs.F32(2, 3), inputs.F32(3), inputs.F32(3), inputs.F32(3))
    left = audit_cases._left_out(OP, given)
    assert [repr(c) for c in left] == [
        repr(inputs.Support(inputs.F32(2, 3), None, inputs.F32(3), inputs.F32(3))),
        repr(inputs.Support(inputs.F32(2, 3), inputs.F32(3), None, inputs.F32(3))),
    ]  # at most MAX_LEFT_OUT of them
    assert audit_cases.MAX_LEFT_OUT == 2
    assert audit_cases._left_out(OP, inputs.Support(inputs.F32(2, 3))) == []


def test_a_definitions_first_cases_are_a_row_and_the_one_giving_optional_inputs():
    ir = IrDef(
        "Biased",
        inputs=[Input("x"), Input("bias", "optional"), Input("scale", "optional"),
                Input("shift", "optional")],
        outputs=[Output("y")],
        attrs=[Attr("keep", "VT_BOOL", False)],
    )  # fmt: skip
    rows = ("DT_FLOAT16", "DT_FLOAT", "DT_BF16")
    cann = CannOp(ir, {n: rows for n in ("x", "bias", "scale", "shift", "y")})
    found = audit_cases.from_definition(OP, {"Biased": cann})
    assert len(found) == 4  # three rows, then the case giving the optional inputs
    first, second = found[: audit_cases.MAX_CASES]
    assert first.args[1:] == (None, None, None), first
    assert all(isinstance(a, inputs.TensorSpec) for a in second.args), second


def test_a_definitions_cases_are_held_to_its_cpp_infershape(monkeypatch):
    """As ``opsdk new --from-cann`` holds them (issue 40): a case the C++ refuses (here
    any ``x`` but a 3-D one) is never an audit cell's; without the C++, the guess."""
    from opsdk.scaffold import cann_infer

    ir = IrDef("Plain", inputs=[Input("x")], outputs=[Output("y")])
    cann = CannOp(ir, {"x": ("DT_FLOAT16",), "y": ("DT_FLOAT16",)})
    lib = torch.library.Library("audit_cases_held", "DEF")  # noqa: TID251 - the test's own op
    lib.define("plain(Tensor x) -> Tensor")
    op = torch.ops.audit_cases_held.plain.default
    guessed = audit_cases.from_definition(op, {"Plain": cann})
    assert len(guessed[0].args[0].dims) != 3, guessed  # the guess: what it refuses
    asked = []

    def acceptor(found, ir, op):
        assert found == ("inference", "root")
        return lambda shapes, values, dtypes=None: asked.append(shapes) or len(shapes["x"]) == 3

    monkeypatch.setattr(cann_infer, "acceptor", acceptor)
    held = audit_cases.from_definition(op, {"Plain": cann}, lambda c: ("inference", "root"))
    assert asked and len(held[0].args[0].dims) == 3, held
