"""The aclnn API CANN's build (opbuild) generates for an op, rule by rule, and the cpp
kernel's EXEC_NPU_CMD arguments for it.

Each expected signature is spelled as opbuild writes it in its generated ``aclnn_*.h``
(checked against generated headers such as an EyeCustom's ``aclTensor *yRef, int64_t numRows,
..., const aclIntArray *batchShapeOptional, int64_t dtype`` and a BatchNormV3's
``aclTensor *runningMeanRef``); the definitions are written here.
"""

import re

import pytest

from opsdk._runtime import locator, spec, types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import aclnn
from opsdk.errors import SpecError


def _params(ir: IrDef, dtypes=None) -> list[str]:
    return [p.declared for p in aclnn.api(ir, dtypes).params]


X = Input("x")
Y = Output("y")

SIGNATURES = {
    "ref input, its output dropped": (
        IrDef("Eye", [Input("y")], [Output("y")], [Attr("num_rows", "VT_INT")]),
        ["aclTensor *yRef", "int64_t numRows"],
    ),
    "ref with a fresh output too: the fresh one is Out": (
        IrDef("Step", [Input("var"), X], [Output("var"), Y]),
        ["aclTensor *varRef", "const aclTensor *x", "const aclTensor *yOut"],
    ),
    "optional input": (
        IrDef("Op", [X, Input("bias", "optional")], [Y]),
        ["const aclTensor *x", "const aclTensor *biasOptional", "const aclTensor *out"],
    ),
    "dynamic input and output": (
        IrDef("Op", [Input("xs", "dynamic")], [Output("ys", "dynamic")]),
        ["const aclTensorList *xs", "const aclTensorList *out"],
    ),
    "dynamic ref": (
        IrDef("Op", [Input("xs", "dynamic")], [Output("xs", "dynamic")]),
        ["aclTensorList *xsRef"],
    ),
    "a single output is out, whatever its name": (
        IrDef("Op", [X], [Output("z")]),
        ["const aclTensor *x", "const aclTensor *out"],
    ),
    "several outputs are <name>Out, camelCase": (
        IrDef("Op", [X], [Y, Output("total_weight")]),
        ["const aclTensor *x", "const aclTensor *yOut", "const aclTensor *totalWeightOut"],
    ),
    "inputs, attrs, outputs, each in declaration order": (
        IrDef("Op", [Input("b"), Input("a")], [Output("d"), Output("c")], [Attr("z", "VT_INT")]),
        [
            "const aclTensor *b",
            "const aclTensor *a",
            "int64_t z",
            "const aclTensor *dOut",
            "const aclTensor *cOut",
        ],
    ),
    "scalar and scalar-list inputs": (
        IrDef("Op", [Input("alpha", scalar="scalar"), Input("betas", scalar="scalar_list")], [Y]),
        ["const aclScalar *alpha", "const aclScalarList *betas", "const aclTensor *out"],
    ),
    "an output shape depending on the computation makes every tensor mutable": (
        IrDef("Op", [X, Input("xs", "dynamic")], [Output("y", depends_on_compute=True)]),
        ["aclTensor *x", "const aclTensorList *xs", "aclTensor *out"],
    ),
}


@pytest.mark.parametrize("case", SIGNATURES, ids=str)
def test_signature_rules(case):
    ir, expected = SIGNATURES[case]
    assert _params(ir) == expected


ATTRS = {
    # required attr: no suffix; optional str and list attrs: Optional
    ("VT_INT", None): "int64_t numRows",
    ("VT_INT", 0): "int64_t numRows",
    ("VT_FLOAT", None): "double numRows",
    ("VT_FLOAT", 1.0): "double numRows",
    ("VT_BOOL", False): "bool numRows",
    ("VT_DATA_TYPE", 9): "int64_t numRows",  # REG_OP Type: OpDef's .Int(ge::DT_...)
    ("VT_STRING", None): "char *numRows",
    ("VT_STRING", "mean"): "char *numRowsOptional",
    ("VT_LIST_INT", None): "const aclIntArray *numRows",
    ("VT_LIST_INT", (1,)): "const aclIntArray *numRowsOptional",
    ("VT_LIST_FLOAT", (1.0,)): "const aclFloatArray *numRowsOptional",
    ("VT_LIST_BOOL", None): "const aclBoolArray *numRows",
}


@pytest.mark.parametrize("attr", ATTRS, ids=str)
def test_attr_types_and_names(attr):
    value_type, default = attr
    ir = IrDef("Op", [X], [Y], [Attr("num_rows", value_type, default)])
    assert _params(ir)[1] == ATTRS[attr]


def test_every_attr_type_of_the_table_has_an_aclnn_type_or_is_refused():
    for row in types.BY_VALUE_TYPE.values():
        ir = IrDef("Op", [X], [Y], [Attr("a", row.value_type)])
        if row.aclnn is None:
            with pytest.raises(SpecError, match=f"attr 'a' is a {row.reg_op}, for which CANN"):
                aclnn.api(ir)
        else:
            assert aclnn.api(ir).params[1].type == row.aclnn


def test_an_attr_aclnn_cannot_take_is_refused_in_one_line():
    ir = IrDef("Op", [X], [Y], [Attr("names", "VT_LIST_STRING")])
    with pytest.raises(SpecError) as err:
        aclnn.api(ir)
    assert "\n" not in str(err.value)
    assert str(err.value).startswith("Op: attr 'names' is a ListString")


VALUE_DEPEND = {
    ("DT_FLOAT",): "const aclFloatArray *shape",
    ("DT_BOOL",): "const aclBoolArray *shape",
    ("DT_INT64",): "const aclIntArray *shape",
    ("DT_INT32", "DT_INT64", "DT_UINT8"): "const aclIntArray *shape",
}


@pytest.mark.parametrize("dtypes", VALUE_DEPEND, ids=str)
def test_value_depend_inputs_are_host_arrays_by_their_data_types(dtypes):
    ir = IrDef("Op", [X, Input("shape", value_depend=True)], [Y])
    found = aclnn.api(ir, {"shape": dtypes})
    assert found.params[1].declared == VALUE_DEPEND[dtypes]
    # ... and the op gets aclnn<Op>TensorGetWorkspaceSize, taking it as a tensor
    assert "const aclTensor *shape," in found.workspace_prototype(tensor=True)
    assert found.workspace_prototype(tensor=True).startswith("aclnnStatus aclnnOpTensorGet")


@pytest.mark.parametrize(
    ("dtypes", "message"),
    [
        ((), "declares no data types"),
        (("DT_FLOAT", "DT_FLOAT16"), "accepts DT_FLOAT, DT_FLOAT16; aclnn takes"),
        (("DT_FLOAT", "DT_INT64"), "all float, all bool or all integers"),
    ],
)
def test_value_depend_inputs_aclnn_cannot_take_are_refused(dtypes, message):
    ir = IrDef("Op", [Input("shape", value_depend=True)], [Y])
    with pytest.raises(SpecError, match=message):
        aclnn.api(ir, {"shape": dtypes})


def test_value_depend_and_scalar_together_are_refused():
    ir = IrDef("Op", [Input("shape", value_depend=True, scalar="scalar")], [Y])
    with pytest.raises(SpecError, match="is also a scalar; aclnn takes one or the other"):
        aclnn.api(ir, {"shape": ("DT_INT64",)})


@pytest.mark.parametrize(
    ("name", "expected"),
    [("num_rows", "numRows"), ("x1_scale", "x1Scale"), ("absmax_m", "absmaxM"), ("X", "x")],
)
def test_names_are_camel_case_as_opbuild_writes_them(name, expected):
    assert aclnn.camel(name) == expected


@pytest.mark.parametrize(
    ("op_type", "expected"),
    [
        ("EyeCustom", "aclnn_eye_custom.h"),
        ("MatmulW8a8I32Custom", "aclnn_matmul_w8a8i32custom.h"),
        ("ApplyAdamWQuant", "aclnn_apply_adam_wquant.h"),
        ("LayerNormV4", "aclnn_layer_norm_v4.h"),
    ],
)
def test_header_file_names_follow_opbuild(op_type, expected):
    assert aclnn.file_name(IrDef(op_type)) == expected


EYE = IrDef(
    "EyeCustom",
    [Input("y")],
    [Output("y")],
    [
        Attr("num_rows", "VT_INT"),
        Attr("num_columns", "VT_INT", 0),
        Attr("batch_shape", "VT_LIST_INT", ()),
        Attr("dtype", "VT_DATA_TYPE", 0),
    ],
)


def test_the_header_declares_both_functions_as_opbuild_does():
    text = aclnn.header(EYE)
    assert "#ifndef ACLNN_EYE_CUSTOM_H_\n#define ACLNN_EYE_CUSTOM_H_\n" in text
    assert '#include "aclnn/acl_meta.h"' in text
    assert (
        "aclnnStatus aclnnEyeCustomGetWorkspaceSize(\n"
        "    aclTensor *yRef,\n"
        "    int64_t numRows,\n"
        "    int64_t numColumns,\n"
        "    const aclIntArray *batchShapeOptional,\n"
        "    int64_t dtype,\n"
        "    uint64_t *workspaceSize,\n"
        "    aclOpExecutor **executor);"
    ) in text
    assert (
        "aclnnStatus aclnnEyeCustom(\n    void *workspace,\n    uint64_t workspaceSize,\n"
        "    aclOpExecutor *executor,\n    aclrtStream stream);"
    ) in text
    # The comment names the ref output too, where opbuild lists it among the outputs.
    assert " * dtype : optional\n * yRef : required\n * workspaceSize" in text
    assert "TensorGetWorkspaceSize" not in text  # only a ValueDepend op has one


def _call(schema: str, ir: IrDef, returns, dtypes=None) -> dict:
    op = spec.parse(schema, namespace="acl")
    return aclnn.call(op, ir, dtypes or {}, returns)


def test_the_call_passes_a_written_input_once_as_its_ref():
    found = _call(
        "eye(Tensor(a!) y, *, int num_rows) -> ()",
        IrDef("Eye", [Input("y")], [Output("y")], [Attr("num_rows", "VT_INT")]),
        [],
    )
    assert [a["passed"] for a in found["args"]] == ["y", "num_rows"]
    assert found["written"] == [{"name": "y", "param": "yRef"}] and found["fresh"] == []


def test_the_call_makes_what_exec_npu_cmd_cannot_convert():
    ir = IrDef(
        "Rich",
        [
            X,
            Input("bias", "optional"),
            Input("shape", value_depend=True),
            Input("a", scalar="scalar"),
        ],
        [Output("y"), Output("parts", "dynamic")],
        [
            Attr("mode", "VT_STRING", "sum"),
            Attr("dtype", "VT_DATA_TYPE", 0),
            Attr("scales", "VT_LIST_FLOAT"),
            Attr("flags", "VT_LIST_BOOL"),
            Attr("ks", "VT_LIST_INT"),
            Attr("eps", "VT_FLOAT"),
        ],
    )
    found = _call(
        "rich(Tensor x, Tensor? bias, Tensor shape, Tensor a, *, str mode, ScalarType dtype, "
        "float[] scales, bool[] flags, int[] ks, float eps) -> (Tensor y, Tensor[] parts)",
        ir,
        ["y", "parts"],
        {"shape": ("DT_INT32",)},
    )
    locals_ = {a["name"]: (a["local"], a["passed"]) for a in found["args"]}
    assert locals_ == {
        "x": (None, "x"),
        "bias": (None, "bias"),  # an optional tensor: EXEC_NPU_CMD makes nullptr when absent
        "shape": ("host_values", "shape_acl"),
        "a": ("scalar", "a_acl"),
        "mode": ("str", "mode_acl"),
        "dtype": ("dtype", "dtype_acl"),
        "scales": ("float_array", "scales_acl"),
        "flags": ("bool_array", "flags_acl"),
        "ks": (None, "ks"),
        "eps": (None, "eps"),
        "y": (None, "y"),
        "parts": ("tensor_list", "parts_acl"),
    }
    assert found["args"][2]["element"] == "int64_t"
    assert found["api"] == "aclnnRich" and found["fresh"] == ["y", "parts"]


def test_the_call_uses_the_torch_names_of_renamed_arguments():
    ir = IrDef(
        "Op", [Input("self")], [Y], [Attr("lambda", "VT_FLOAT")], arg_names={"lambda_": "lambda"}
    )
    found = _call("op(Tensor self, *, float lambda_) -> Tensor", ir, ["out"])
    assert [(a["param"], a["passed"]) for a in found["args"]] == [
        ("const aclTensor *self", "self"),
        ("double lambda", "lambda_"),
        ("const aclTensor *out", "out"),
    ]


def test_acl_numbers_data_types_as_ge_does():
    """The kernel passes a dtype attr as op-plugin's aclDataType of it (opsdk/aclnn.h's
    ge_dtype) where aclnn takes GE's number: ACL's enum, in the torch-npu wheel, is GE's."""
    text = locator.torch_npu_file("include/acl/acl_base_rt.h").read_text()
    acl = {f"DT_{name}": int(value) for name, value in re.findall(r"\bACL_(\w+) = (-?\d+),", text)}
    shared = acl.keys() & types.DTYPES.keys()
    assert len(shared) >= 25 and {"DT_FLOAT", "DT_INT64", "DT_BF16"} <= shared
    assert {name: acl[name] for name in shared} == {n: types.DTYPES[n].value for n in shared}
