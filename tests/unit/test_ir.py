"""The IR a schema implies, and its CANN exports (msopgen JSON, REG_OP), from one source."""

import json

import pytest

from opsdk._runtime import converters, irdef, spec
from opsdk.cann import exports
from opsdk.harness import dtypes

RICH = (
    "my_op(Tensor x, Tensor? w, Tensor[] xs, Tensor(a!) acc, *, float alpha=1.0, "
    "int[2] k=[1,1], ScalarType? dtype=None, bool flag=False) -> (Tensor a, Tensor[] parts)"
)


def test_ir_follows_torchair_rules_for_inputs_outputs_and_attrs():
    ir = converters.ir_def_for(spec.parse(RICH, namespace="irt"))
    assert ir.op_type == "MyOp" and ir.torch_op == "irt::my_op"
    assert [(i.name, i.kind) for i in ir.inputs] == [
        ("x", "required"),
        ("w", "optional"),
        ("xs", "dynamic"),
        ("acc", "required"),
    ]
    # The written input comes back as a same-named output, before the op's own outputs.
    assert [(o.name, o.kind) for o in ir.outputs] == [
        ("acc", "required"),
        ("a", "required"),
        ("parts", "dynamic"),
    ]
    assert [(a.name, a.type, a.default) for a in ir.attrs] == [
        ("alpha", "VT_FLOAT", 1.0),
        ("k", "VT_LIST_INT", (1, 1)),
        ("dtype", "VT_DATA_TYPE", None),
        ("flag", "VT_BOOL", False),
    ]


def test_unnamed_returns_do_not_collide_with_argument_names():
    op = spec.parse("f(Tensor out, Tensor x) -> (Tensor, Tensor)", namespace="irt")
    assert converters.ir_output_names(op) == ["out0", "out1"]
    op = spec.parse("f(Tensor out) -> Tensor", namespace="irt")
    assert converters.ir_output_names(op) == ["out_"]


def test_msopgen_json_lists_every_input_output_and_attr():
    ir = converters.ir_def_for(spec.parse(RICH, namespace="irt"))
    [op] = json.loads(exports.msopgen_json(ir))
    assert op["op"] == "MyOp"
    assert [(d["name"], d["param_type"]) for d in op["input_desc"]] == [
        ("x", "required"),
        ("w", "optional"),
        ("xs", "dynamic"),
        ("acc", "required"),
    ]
    assert all(len(d["format"]) == len(d["type"]) for d in op["input_desc"] + op["output_desc"])
    attrs = {a["name"]: a for a in op["attr"]}
    assert attrs["alpha"] == {
        "name": "alpha",
        "param_type": "optional",
        "type": "float",
        "default_value": "1.0",
    }
    assert attrs["dtype"]["param_type"] == "required" and "default_value" not in attrs["dtype"]
    assert attrs["k"]["default_value"] == "{1, 1}"


def test_reg_op_declares_the_same_prototype():
    ir = converters.ir_def_for(spec.parse(RICH, namespace="irt"))
    text = exports.reg_op(ir)
    assert "namespace ge {\nREG_OP(MyOp)\n" in text and '#include "graph/operator_reg.h"' in text
    for line in (
        ".INPUT(x, TensorType::ALL())",
        ".OPTIONAL_INPUT(w, TensorType::ALL())",
        ".DYNAMIC_INPUT(xs, TensorType::ALL())",
        ".OUTPUT(acc, TensorType::ALL())",
        ".DYNAMIC_OUTPUT(parts, TensorType::ALL())",
        ".ATTR(alpha, Float, 1.0)",
        ".ATTR(flag, Bool, false)",
        ".REQUIRED_ATTR(dtype, Type)",
        ".OP_END_FACTORY_REG(MyOp)",
    ):
        assert line in text


def test_registry_keeps_one_definition_per_op_type():
    ir = irdef.IrDef("IrtUnique", [irdef.Input("x")], [irdef.Output("y")], torch_op="irt::u")
    assert irdef.register(ir) is ir and irdef.register(ir) is ir
    other = irdef.IrDef("IrtUnique", [irdef.Input("z")], [irdef.Output("y")])
    with pytest.raises(ValueError, match="'IrtUnique' is registered already .*unique IR name$"):
        irdef.register(other)
    assert irdef.lookup("IrtUnique") is ir
    assert ir.as_torchair_answer() == ("SUCCESS", [("x", "required")], [("y", "required")], [])


def test_exports_agree_and_read_back_as_the_same_model():
    from opsdk import cann

    text = (
        "REG_OP(Mix).INPUT(x, TensorType({DT_FLOAT, DT_BF16})).OPTIONAL_INPUT(i, "
        "TensorType({DT_INT64, DT_INT32})).DYNAMIC_OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT}))"
        ".ATTR(dt, Type, DT_INT16).ATTR(ks, ListInt, {1, 2}).REQUIRED_ATTR(s, String)"
        ".OP_END_FACTORY_REG(Mix)"
    )
    (source,) = cann.read(text)
    assert cann.read(exports.reg_op(source)) == [source]
    assert cann.read(exports.msopgen_json(source)) == [source]


def _rms_norm_ir():
    return irdef.IrDef(
        "RmsNorm",
        inputs=[irdef.Input("x"), irdef.Input("gamma")],
        outputs=[irdef.Output("y"), irdef.Output("rstd")],
        attrs=[irdef.Attr("epsilon", "VT_FLOAT", 1e-6)],
    )


def _parse(schema):
    return spec.parse(schema, namespace="irb")


def test_bind_maps_torch_arguments_to_cann_names_by_name_then_position():
    op = _parse("n(Tensor self, Tensor gamma, float epsilon=1e-6) -> (Tensor, Tensor)")
    ir = converters.bind(_rms_norm_ir(), op)
    assert ir.torch_op == "irb::n" and ir.op_type == "RmsNorm"
    assert dict(ir.arg_names) == {"self": "x"}  # gamma and epsilon keep their names
    # Different names on both sides pair in order; optional inputs and renamed attrs too.
    silu = irdef.IrDef(
        "GroupNormSilu",
        inputs=[
            irdef.Input("x"),
            irdef.Input("gamma", "optional"),
            irdef.Input("beta", "optional"),
        ],
        outputs=[irdef.Output("y")],
        attrs=[irdef.Attr("num_groups", "VT_INT"), irdef.Attr("eps", "VT_FLOAT", 1e-4)],
    )
    op = _parse("g(Tensor input, Tensor? weight, Tensor? bias, int group, float eps) -> Tensor")
    assert dict(converters.bind(silu, op).arg_names) == {
        "input": "x",
        "weight": "gamma",
        "bias": "beta",
        "group": "num_groups",
    }


def test_bind_takes_given_names_and_arguments_the_converter_consumes():
    op = _parse("r(Tensor self, Tensor g, str mode='a', Tensor? extra=None) -> Tensor")
    ir = _rms_norm_ir()
    with pytest.raises(
        ValueError, match=r"which IR input of \['x', 'gamma'\] each of \['self', 'g', 'extra'\]"
    ):
        converters.bind(ir, op)
    bound = converters.bind(ir, op, fixed_args={"extra": None, "mode": "a"})
    assert dict(bound.arg_names) == {"self": "x", "g": "gamma"}
    assert dict(bound.fixed_args) == {"extra": None, "mode": "a"}
    names = {"g": "x", "self": "gamma"}
    given = converters.bind(ir, op, arg_names=names, fixed_args=bound.fixed_args)
    assert dict(given.arg_names) == {"g": "x", "self": "gamma"}


def test_bind_refuses_a_required_ir_input_no_argument_feeds():
    op = _parse("s(Tensor self) -> Tensor")
    with pytest.raises(
        ValueError, match=r"no argument feeds the required IR input\(s\) \['gamma'\]"
    ):
        converters.bind(_rms_norm_ir(), op, arg_names={"self": "x"})


def _op(ns: str, schema: str, fake):
    """An op defined in this process with ``fake`` as its fake function, and its IR."""
    import torch

    lib = torch.library.Library(ns, "FRAGMENT")
    lib.define(schema)
    name = schema.split("(")[0]
    torch.library.register_fake(f"{ns}::{name}", fake, lib=lib)
    op = getattr(getattr(torch.ops, ns), name).default
    return lib, op, converters.ir_def_for(spec.of(op))


def test_both_exports_of_a_package_op_declare_the_same_data_types():
    """One package op, two formats: what the specs feed each tensor (a column per case,
    an int index output, an int64 host scalar), read back as one model."""
    import torch

    from opsdk import cann
    from opsdk.inputs import F16, F32, I32, I64, Support, declare_supported

    def fake(x, idx, n):
        return torch.empty_like(x), torch.empty_like(idx, dtype=torch.int64)

    _lib, op, ir = _op(
        "irt_pkg", "mix(Tensor x, Tensor idx, SymInt n) -> (Tensor y, Tensor i)", fake
    )
    declare_supported(op, [Support(F32(2, 3), I64(2, 3), 2), Support(F16(2, 3), I32(2, 3), 2)])
    model = dtypes.model(ir)
    assert model.dtypes == {
        "x": ("DT_FLOAT", "DT_FLOAT16"),
        "idx": ("DT_INT64", "DT_INT32"),
        "n": ("DT_INT64", "DT_INT64"),
        "y": ("DT_FLOAT", "DT_FLOAT16"),
        "i": ("DT_INT64", "DT_INT64"),
    }
    from_reg_op = cann.read(exports.reg_op(model))
    assert from_reg_op == cann.read(exports.msopgen_json(model))
    assert [read.dtypes for read in from_reg_op] == [model.dtypes]


def test_a_skeletons_export_asks_for_the_fake_function():
    from opsdk._runtime.implement_me import ImplementMe
    from opsdk.errors import OpsdkError

    def fake(x):
        raise ImplementMe(__file__, "sk_fake", "return empty tensors of the output shapes")

    _lib, _, ir = _op("irt_skel", "sk(Tensor x) -> Tensor", fake)
    with pytest.raises(OpsdkError, match=r"^irt_skel::sk: .*fake function.*implement me: sk_fake"):
        dtypes.model(ir)
