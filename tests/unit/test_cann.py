"""Reading CANN op definitions into one model, against real ops (msopgen JSON: its own
test module).

The REG_OP prototypes are CANN's own, from the docstrings of TorchAir's generated GE
API in the torch-npu wheel (read at test time, never committed).
"""

from __future__ import annotations

import ast

import pytest

from opsdk import cann
from opsdk._runtime import locator, types
from opsdk._runtime.irdef import Attr, Input, Output
from opsdk.errors import SpecError

RAW_OPS = "dynamo/torchair/_ge_concrete_graph/auto_generated_ge_raw_ops.py"
F3 = ("DT_FLOAT", "DT_FLOAT16", "DT_BF16")


@pytest.fixture(scope="module")
def real():
    """The real prototypes of six ops of different kinds, read from the wheel."""
    wanted = ["RmsNorm", "SwiGlu", "ScatterNdUpdate", "GeluV2", "AddRmsNorm", "AscendAntiQuantV2"]
    ops = cann.read(locator.torch_npu_file(RAW_OPS), op_types=wanted)
    return {op.ir.op_type: op for op in ops}


def test_multi_output_op_with_aligned_dtypes(real):
    op = real["RmsNorm"]
    assert op.ir.inputs == (Input("x"), Input("gamma"))
    assert op.ir.outputs == (Output("y"), Output("rstd"))
    assert op.ir.attrs == (Attr("epsilon", "VT_FLOAT", 1e-6),)
    # Column i of every list is one supported combination: rstd stays float.
    assert op.dtypes == {"x": F3, "gamma": F3, "y": F3, "rstd": ("DT_FLOAT",) * 3}
    assert op.formats["x"] == ("ND",) * 3


def test_three_outputs_one_named_like_no_input(real):
    op = real["AddRmsNorm"]
    assert [o.name for o in op.ir.outputs] == ["y", "rstd", "x"]
    assert op.dtypes["x1"] == F3


def test_ref_output_and_named_type_sets(real):
    op = real["ScatterNdUpdate"]
    assert [i.name for i in op.ir.inputs] == ["var", "indices", "updates"]
    assert op.ir.outputs == (Output("var"),)  # the in-place (ref) output: input var
    assert op.dtypes["indices"] == ("DT_INT32", "DT_INT64")  # IndexNumberType()
    assert len(op.dtypes["var"]) == 20 and "DT_BF16" in op.dtypes["var"]  # BasicType()
    assert op.ir.attrs == (Attr("use_locking", "VT_BOOL", False),)


@pytest.mark.parametrize(
    ("op_type", "attr"),
    [("SwiGlu", Attr("dim", "VT_INT", -1)), ("GeluV2", Attr("approximate", "VT_STRING", "none"))],
)
def test_type_symbols_without_declaration_accept_any(real, op_type, attr):
    op = real[op_type]
    assert op.ir.attrs == (attr,)
    assert op.type_vars == {"x": "T", "y": "T"}
    assert op.dtypes == {"x": (), "y": ()}


def test_optional_input_and_dtype_enumerator_defaults(real):
    op = real["AscendAntiQuantV2"]
    assert op.ir.inputs[2] == Input("offset", "optional")
    # `.ATTR(dst_type, Int, DT_FLOAT16)`: GE's value of DT_FLOAT16 (1), not torch's (5), an
    # Int holding a data type (torch takes a ScalarType).
    assert op.ir.attrs == (
        Attr("dst_type", "VT_INT", 1, dtype=True),
        Attr("sqrt_mode", "VT_BOOL", False),
    )
    assert op.dtypes["scale"] == ("DT_FLOAT", "DT_BF16")  # written DT_BFLOAT16
    assert op.dtypes["x"][:2] == ("DT_INT8", "DT_INT4")


HEADER = """
#include "graph/operator_reg.h"
namespace ge {
REG_OP(MyOp)
    .INPUT(x, TensorType({DT_FLOAT16, DT_FLOAT}))
    .DYNAMIC_INPUT(xs, "T")
    .DYNAMIC_OUTPUT(ys, TensorType::FLOAT())
    .DATATYPE(T, TensorType({DT_INT32, DT_INT32}))
    .REQUIRED_ATTR(sizes, ListInt)
    .ATTR(scales, ListFloat, {1, 0.5})
    .ATTR(dt, Type, DT_INT16)
    .ATTR(tag, String, "a,b")
    .OP_END_FACTORY_REG(MyOp);
REG_OP(Other).INPUT(y, TensorType::ALL()).OP_END_FACTORY_REG(Other);
}  // namespace ge
"""


def test_header_with_several_ops_and_datatype_symbols():
    my, other = cann.read(HEADER)
    assert my.ir.inputs == (Input("x"), Input("xs", "dynamic"))
    assert my.ir.outputs == (Output("ys", "dynamic"),)
    assert my.dtypes == {"x": ("DT_FLOAT16", "DT_FLOAT"), "xs": ("DT_INT32",) * 2, "ys": F3}
    assert my.ir.attrs == (
        Attr("sizes", "VT_LIST_INT"),
        Attr("scales", "VT_LIST_FLOAT", (1.0, 0.5)),
        Attr("dt", "VT_DATA_TYPE", 6),  # GE's DT_INT16
        Attr("tag", "VT_STRING", "a,b"),
    )
    assert other.ir.op_type == "Other" and len(other.dtypes["y"]) == 23
    assert [op.ir.op_type for op in cann.read(HEADER, op_types=["Other"])] == ["Other"]


# The op_proto.h opbuild generates from an OpDef, and what ops-nn's graph headers write:
# ge::-qualified types, comments (a REG_OP named in one is no op), the header's macros.
OPBUILD = """
#ifndef OP_PROTO_H_
#define OP_PROTO_H_
#include "graph/operator_reg.h"
#include "register/op_impl_registry.h"
// REG_OP(Commented) is documentation, not an op
/* as canndev's REG_OP(ArgMaxWithValue) */
#define IDX_TYPES {ge::DT_INT32, DT_INT64}
#define VALUE_TYPES                 \\
    {                               \\
        ge::DT_FLOAT, ge::DT_BF16   \\
    }
namespace ge {

REG_OP(ArgMaxWithValue)
    .INPUT(x, ge::TensorType::ALL())  /* "the input" */
    // the outputs
    .OUTPUT(indice, ge::TensorType(IDX_TYPES))
    .OUTPUT(values, ge::TensorType({ge::DT_FLOAT16, DT_BF16}))
    .OPTIONAL_INPUT(v, TensorType(VALUE_TYPES))
    .REQUIRED_ATTR(dimension, Int)
    .ATTR(keep_dims, Bool, false)
    .ATTR(path, String, "a//b /* c */")
    .OP_END_FACTORY_REG(ArgMaxWithValue);

}

#endif
"""


def test_opbuilds_op_proto_and_real_headers_c_constructs():
    (op,) = cann.read(OPBUILD)
    assert op.ir.op_type == "ArgMaxWithValue"
    assert op.ir.inputs == (Input("x"), Input("v", "optional"))
    assert op.ir.outputs == (Output("indice"), Output("values"))
    assert op.ir.attrs == (
        Attr("dimension", "VT_INT"),
        Attr("keep_dims", "VT_BOOL", False),
        Attr("path", "VT_STRING", "a//b /* c */"),
    )
    assert len(op.dtypes["x"]) == 23  # TensorType::ALL()
    assert op.dtypes["indice"] == ("DT_INT32", "DT_INT64")
    assert op.dtypes["values"] == ("DT_FLOAT16", "DT_BF16")
    assert op.dtypes["v"] == ("DT_FLOAT", "DT_BF16")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("REG_OP(A).INPUT(x, TensorType({DT_NOPE}))", "A).x: unknown data type 'DT_NOPE'"),
        ("REG_OP(A).INPUT(x, TensorType({DT_FP8_E5M2}))", "unknown data type 'DT_FP8_E5M2'"),
        ("/* REG_OP(A).INPUT(x, TensorType::ALL()) */", "no op definition found"),
        ("REG_OP(A).ATTR(k, ListListInt, {})", "attr type 'ListListInt' has no torch type"),
        ("REG_OP(A).ATTR(k, Int, 1.5)", "default '1.5' is not a Int"),
        ("REG_OP(A).ATTR(k, Bool, 0)", "default 0 is not a Bool"),
        ("REG_OP(A).INPUT(x)", ".INPUT takes 2 arguments, got 1"),
        ("REG_OP(A).INFER_SHAPE(x)", "unsupported macro .INFER_SHAPE"),
        ("REG_OP(A).INPUT(x, TensorType({DT_FLOAT})", "unbalanced parentheses"),
        ("REG_OP(A).OP_END_FACTORY_REG(B)", "ends with OP_END_FACTORY_REG(B)"),
        ("int main() {}\n", "no op definition found"),
    ],
)
def test_bad_definitions_fail_in_one_line(text, message):
    with pytest.raises(SpecError) as err:
        cann.read(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_op_type_is_named():
    with pytest.raises(SpecError, match="no op definition of type Nope found"):
        cann.read(HEADER, op_types=["Nope"])


def test_dtype_table_is_ges_numbering():
    """types.DTYPES against TorchAir's own ``torchair.ge.DataType`` (GE's C++ enum)."""
    source = locator.torch_npu_file("dynamo/torchair/ge/_ge_graph.py").read_text()
    (cls,) = [
        n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "DataType"
    ]
    theirs = {
        a.targets[0].id: a.value.value
        for a in cls.body
        if isinstance(a, ast.Assign) and isinstance(a.value, ast.Constant)
    }
    theirs = {k: v for k, v in theirs.items() if k.startswith("DT_") and k != "DT_MAX"}
    assert {d.ge: d.value for d in types.DTYPES.values()} == theirs


def test_unreadable_file_is_named(tmp_path):
    with pytest.raises(SpecError, match="missing.json: cannot read it"):
        cann.read(str(tmp_path / "missing.json"))


def _specs(side, name="op"):
    from opsdk._runtime import spec
    from opsdk.cann.specs import cases

    return cases(spec.parse(f"t::{name}{side.schema}"), side.ir, side.op)


def test_torch_side_of_real_ops():
    """The schema, IR tie and specs --from-cann writes for real ops of different kinds."""
    from opsdk.scaffold.cann_torch import torch_side

    want = ["ScatterNdUpdate", "MoeGatingTopK", "AscendAntiQuantV2"]
    ops = {op.ir.op_type: op for op in cann.read(locator.torch_npu_file(RAW_OPS), want)}
    side = torch_side(ops["ScatterNdUpdate"])  # CANN's ref output var: written in place
    assert side.schema == (
        "(Tensor(a!) var, Tensor indices, Tensor updates, bool use_locking=False) -> ()"
    )
    # Several tensors: sizes alike, so they stay compatible whatever the op does with them.
    assert "Support(F32(4, 4), I32(4, 4), F32(4, 4))" in _specs(side)
    side = torch_side(ops["MoeGatingTopK"])  # optional inputs, a required attr
    assert side.schema.startswith("(Tensor x, Tensor? bias, Tensor? input_ids, Tensor? tid2eid")
    assert ", Tensor? tid2eid, int k, int k_group=1," in side.schema  # attrs positional
    assert side.schema.endswith("-> (Tensor y, Tensor expert_idx, Tensor y2)")
    assert _specs(side)[0] == "Support(F32(4, 4), None, None, None, 1)"
    # Only dtype combinations torch has: x is int8 (int4, hifloat8... are skipped).
    # The first case says which declared types it leaves out, and why (ir.py keeps them).
    first = _specs(torch_side(ops["AscendAntiQuantV2"]))[0]
    assert first.endswith("\nSupport(I8(4, 4), F32(4, 4), None)")
    assert first.startswith("# left out here, kept in ir.py and the exports: DT_FLOAT8_E4M3FN")
    assert "DT_INT4 (no torch dtype opsdk makes inputs of)" in " ".join(first.split("\n# "))


def test_cann_names_python_cannot_take_are_mapped():
    from opsdk.scaffold.cann_torch import torch_side

    (op,) = cann.read(
        "REG_OP(Sel).INPUT(in, TensorType({DT_FLOAT})).OUTPUT(y, TensorType({DT_FLOAT}))"
        ".ATTR(lambda, Type, DT_BF16)"
    )
    side = torch_side(op)
    assert side.schema == "(Tensor in_, ScalarType lambda_=bfloat16) -> Tensor"
    assert dict(side.ir.arg_names) == {"in_": "in", "lambda_": "lambda"}
