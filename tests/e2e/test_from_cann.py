"""`opsdk new --from-cann`: a real CANN op's REG_OP in, a package that passes every column
once its reference kernel is written."""

import json
import re

import pytest
from real_ops import prototype
from scaffolded import compile_cann_branch

from opsdk import cann
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import CannOp
from opsdk.cann.exports import file_stem
from opsdk.scaffold import NewRequest, new


def test_real_reg_op_needs_only_the_reference(opsdk_cli, tmp_path):
    source = tmp_path / "rms_norm_proto.h"
    source.write_text(prototype("RmsNorm"))
    run = opsdk_cli("new", "rms_norm", "--from-cann", source, "--namespace", "fc_rms")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "rms_norm" / "rms_norm"
    assert 'op_type="RmsNorm"' in (pkg / "ir.py").read_text()
    assert "Support(BF16(4, 4), BF16(4, 4))" in (pkg / "specs.py").read_text()
    kernels = pkg / "kernels.py"
    text, count = re.subn(
        r"raise ImplementMe\(__file__, .*\)",
        "rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + epsilon)\n"
        "    return (x.float() * rstd).to(x.dtype) * gamma, rstd",
        kernels.read_text(),
    )
    assert count == 1, "only the reference is left to write"
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    run = opsdk_cli("check", tmp_path / "rms_norm", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    outcomes = {(r["column"], r["shapes"]): r["status"] for r in run.report["results"]}
    assert set(outcomes.values()) == {"pass"} and len(outcomes) == 15, outcomes
    # Round trip: the package's exports read back as the CANN definition it came from.
    (source_op,) = cann.read(source)
    for fmt, suffix in (("reg_op", "_proto.h"), ("msopgen", ".json")):
        run = opsdk_cli("ir", tmp_path / "rms_norm", "--format", fmt, "--out", tmp_path / fmt)
        assert run.code == 0, run.stderr
        exported = cann.read(tmp_path / fmt / f"rms_norm{suffix}")
        assert exported == [source_op], fmt


def _write_reference(kernels, body: str) -> None:
    text, count = re.subn(r"raise ImplementMe\(__file__, .*\)", body, kernels.read_text())
    assert count == 1, "only the reference is left to write"
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))


def test_a_reg_op_s_sets_hold_each_tensor_alone(opsdk_cli, tmp_path):
    """A REG_OP's lists are sets, however aligned they look: an op taking float or half
    and giving int32 or int64 may give int64 from float (the aligned reading failed this
    correct op in ``infer``), and one giving a dtype its output's set lacks still fails."""
    source = tmp_path / "arg_last_proto.h"
    source.write_text(
        "REG_OP(ArgLast)\n"
        "    .INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))\n"
        "    .OUTPUT(y, TensorType({DT_INT32, DT_INT64}))\n"
        "    .OP_END_FACTORY_REG(ArgLast)\n"
    )
    run = opsdk_cli("new", "arg_last", "--from-cann", source, "--namespace", "fc_sets")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "arg_last" / "arg_last"
    assert "dtype_sets=True" in (pkg / "ir.py").read_text()
    _write_reference(pkg / "kernels.py", "return torch.argmax(x, -1)")
    run = opsdk_cli("check", tmp_path / "arg_last", "--backend", "ge", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["status"] for r in run.report["results"]} == {"pass"}
    kernels = (pkg / "kernels.py").read_text()
    (pkg / "kernels.py").write_text(
        kernels.replace("torch.argmax(x, -1)", "torch.argmax(x, -1).to(x.dtype)")
    )
    run = opsdk_cli("check", tmp_path / "arg_last", "--backend", "ge", json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    assert "definition declares DT_INT32 or DT_INT64" in run.stdout


def test_a_type_attr_crosses_in_ges_numbering(opsdk_cli, tmp_path):
    """A REG_OP ``Type`` attr (ArgMaxD's ``dtype``) is a ``ScalarType`` the converter hands
    to GE in GE's numbering, and the executor reads back as a torch dtype; a converter
    passing another number (4, GE's DT_UINT8) fails in GE. The cases ask for int32: ArgMaxD's
    REG_OP declares its output int32 only, so its default DT_INT64 fails in ``infer``."""
    source = tmp_path / "arg_max_d_proto.h"
    source.write_text(prototype("ArgMaxD"))
    run = opsdk_cli("new", "arg_max_d", "--from-cann", source, "--namespace", "fc_argmax")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "arg_max_d" / "arg_max_d"
    assert "ScalarType dtype=4" in (pkg / "schema.py").read_text()  # torch's int64
    converter = pkg / "converter.py"
    assert '"dtype": attr.DataType(torch_type_to_ge_type(dtype))' in converter.read_text()
    _write_reference(pkg / "kernels.py", "return torch.argmax(x, dimension).to(dtype)")
    specs = pkg / "specs.py"  # the specs' sizes are a guess: 3-D takes dimension 1 and 2
    specs.write_text(
        "import torch\n\n"
        + specs.read_text()
        .replace("F32(2, 3), 1)", "F32(2, 4, 3), 1, torch.int32)")
        .replace("F16(2, 3), 1)", "F16(2, 4, 3), 1, torch.int32)")
    )
    run = opsdk_cli("check", tmp_path / "arg_max_d", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["status"] for r in run.report["results"]} == {"pass"}
    assert len(run.report["results"]) == 15

    converter.write_text(
        converter.read_text().replace(
            "attr.DataType(torch_type_to_ge_type(dtype))", "attr.DataType(4)"
        )
    )
    run = opsdk_cli("check", tmp_path / "arg_max_d", "--backend", "ge", "--shapes", "static")
    assert run.code == 1, run.stdout + run.stderr
    assert "fail in layer ge-exec" in run.stdout
    assert "output 0 is torch.uint8, TorchAir expects torch.int32" in run.stdout


# The call each real prototype's generated aclnn API takes: inputs, attrs, outputs (a str attr
# as a char *, made first), and the declaration it is checked against.
CALLS = {
    "RmsNorm": (
        "OPSDK_EXEC_NPU_CMD(aclnnRmsNorm, x, gamma, epsilon, y, rstd);",
        "const aclTensor* x, const aclTensor* gamma, double epsilon, const aclTensor* yOut, "
        "const aclTensor* rstdOut,",
    ),
    "NLLLoss": (
        "OPSDK_EXEC_NPU_CMD(aclnnNLLLoss, x, target, weight, reduction_acl, ignore_index, y, "
        "total_weight);",
        "const aclTensor* x, const aclTensor* target, const aclTensor* weightOptional, "
        "char* reductionOptional, int64_t ignoreIndex, const aclTensor* yOut, "
        "const aclTensor* totalWeightOut,",
    ),
}


def _flat(cpp: str) -> str:
    """The C++ with clang-format's line breaks undone, to find a call or declaration in."""
    return re.sub(r"\s*\n\s*", " ", cpp).replace("( ", "(")


@pytest.mark.slow
@pytest.mark.parametrize("op_type", CALLS)
def test_the_cpp_style_calls_aclnn_and_its_fake_runs_the_reference(tmp_path, op_type):
    """--style cpp: the npu kernel allocates the outputs as the fake shapes them and calls
    aclnn<OpType> as CANN generates it (IR inputs, attrs, outputs; a single output is out,
    several are <name>Out) in the CANN branch, which compiles against the wheel's headers, the
    call proved against the declaration; NLLLoss has an optional input, an int and a str attr,
    two outputs."""
    (op,) = cann.read(prototype(op_type))
    name = file_stem(op.ir)
    source = tmp_path / f"{name}_proto.h"
    source.write_text(prototype(op_type))
    req = NewRequest(name, style="cpp", namespace="fc_cpp", out=tmp_path, from_cann=source)
    pkg = new(req).path / name
    cpp = _flat((pkg / f"{name}.cpp").read_text())
    call, params = CALLS[op_type]
    assert call in cpp
    assert f"aclnnStatus aclnn{op_type}GetWorkspaceSize({params} uint64_t* workspaceSize," in cpp
    assert "opsdk::empty_outputs(" in cpp and "implement me" not in cpp.split("#else")[0]
    fake = (pkg / "fake.py").read_text()
    assert "meta.contiguous(" in fake and "reference(OP, " in fake and "ImplementMe" not in fake
    done = compile_cann_branch(pkg / f"{name}.cpp")
    assert done.returncode == 0, done.stderr


def test_a_data_dependent_output_fails_ge_in_torchairs_code_and_dumps_its_fx_graph(
    opsdk_cli, tmp_path
):
    """An op whose output size depends on its data (an OpDef's OutputShapeDependOnCompute)
    with a right fake (an unbacked size) runs under aot_eager; TorchAir's GE conversion
    guards on that size in its own code: the cell names TorchAir's frame, not converter.py,
    and --dump still writes the FX graph TorchAir received."""
    run = opsdk_cli("new", "nz", "--schema", "nz(Tensor x) -> Tensor", "--namespace", "fc_nz")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "nz" / "nz"
    kernels = pkg / "kernels.py"
    bodies = iter(["return x[x > 0].contiguous()", "return x[x > 0]"])
    text = re.sub(r"raise ImplementMe\(__file__, .*\)", lambda _: next(bodies), kernels.read_text())
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    fake = pkg / "fake.py"
    text = re.sub(
        r"raise ImplementMe\(__file__, .*\)",
        "return x.new_empty(torch.library.get_ctx().new_dynamic_size())",
        fake.read_text(),
    )
    fake.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    dump = tmp_path / "dump"
    argv = ("--backend", "aot_eager,ge", "--shapes", "static", "--dump", dump)
    run = opsdk_cli("check", tmp_path / "nz", *argv, json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    (aot,) = run.cells(column="aot_eager")
    (ge,) = run.cells(column="ge")
    assert aot["status"] == "pass" and (ge["status"], ge["layer"]) == ("fail", "converter")
    assert "TorchAir failed in its own code converting at " in ge["message"]
    assert (
        "(is_zero_element_tensor)" in ge["message"] and "depends on the op's data" in ge["message"]
    )
    assert "fix converter.py" not in ge["message"]
    assert (
        "torch.ops.fc_nz.nz.default"
        in (dump / "fc_nz.nz.default" / "ge-static" / "graph0_fx.py").read_text()
    )


def test_msopgen_json_as_real_files_write_it_warns_and_makes_the_package(opsdk_cli, tmp_path):
    """A sloppy msopgen file (keys of msopst's case format, a missing param_type, text
    defaults): each repair is one `opsdk new: warning:` line, once. (An attr type msopgen
    does not know, a typo, is refused: test_new_refusals.)"""
    source = tmp_path / "conv_custom.json"
    entry = {
        "op": "ConvCustom",
        "language": "cpp",
        "input_desc": [{"name": "x", "format": "ND", "type": "fp16", "dtype": "float16"}],
        "output_desc": [
            {"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}
        ],
        "attr": [
            {
                "name": "strides",
                "param_type": "optional",
                "type": "list_int",
                "default_value": "{1, 1}",
            },
            {"name": "bias", "param_type": "optional", "type": "bool", "default_value": "False"},
            {
                "name": "groups",
                "param_type": "optional",
                "type": "int",
                "value": 1,
                "default_value": "1",
            },
        ],
    }
    source.write_text(json.dumps([entry]))
    run = opsdk_cli("new", "conv_custom", "--from-cann", source, "--namespace", "fc_sloppy")
    assert run.code == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if line.startswith("opsdk new: warning: ")]
    assert len(warned) == 3 and len(run.stderr.splitlines()) == 3, run.stderr
    for needle in ("input 'x' has no param_type", "key 'dtype'", "key 'value'"):
        assert sum(needle in line for line in warned) == 1, (needle, warned)
    schema = (tmp_path / "conv_custom" / "conv_custom" / "schema.py").read_text()
    assert "(Tensor x, int[] strides=[1, 1], bool bias=False, int groups=1) -> Tensor" in schema


EYE = """REG_OP(Eye)
    .INPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))
    .OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))
    .REQUIRED_ATTR(num_rows, Int)
    .ATTR(num_columns, Int, 0)
    .ATTR(batch_shape, ListInt, {})
    .ATTR(dtype, Type, DT_INT64)
    .OP_END_FACTORY_REG(Eye)
"""


@pytest.mark.slow
def test_an_in_place_cann_op_passes_the_written_tensor_once_as_its_ref(tmp_path):
    """An output named like an input is that input written in place: the op is
    ``eye(Tensor(a!) y, ...) -> ()``, aclnn takes ``aclTensor *yRef`` and no output, and the
    dtype attr as GE's number (an int64_t); both branches of the kernel compile (offline, the
    reference returns nothing)."""
    source = tmp_path / "eye_proto.h"
    source.write_text(EYE)
    req = NewRequest("eye", style="cpp", namespace="fc_eye", out=tmp_path, from_cann=source)
    cpp_file = new(req).path / "eye" / "eye.cpp"
    cpp = _flat(cpp_file.read_text())
    assert "-> ()" in cpp and "void eye_npu(at::Tensor& y," in cpp
    assert (
        "aclnnStatus aclnnEyeGetWorkspaceSize(aclTensor* yRef, int64_t numRows, "
        "int64_t numColumns, const aclIntArray* batchShapeOptional, int64_t dtype, "
        "uint64_t* workspaceSize, aclOpExecutor** executor);"
    ) in cpp
    assert "const int64_t dtype_acl = opsdk::aclnn::ge_dtype(dtype);" in cpp
    assert "OPSDK_EXEC_NPU_CMD(aclnnEye, y, num_rows, num_columns, batch_shape, dtype_acl);" in cpp
    # Offline the kernel runs the reference, which returns nothing.
    assert "eye_reference(y, num_rows, num_columns, batch_shape, dtype); #endif" in cpp
    for cann_branch in (True, False):
        done = compile_cann_branch(cpp_file, cann=cann_branch)
        assert done.returncode == 0, done.stderr


# Every kind of aclnn parameter: optional, dynamic, ValueDepend and Scalar/ScalarList inputs
# (OpDef facts no REG_OP carries), list attrs incl. ListFloat, str, dtype, several outputs
# incl. a dynamic one.
RICH = IrDef(
    "RichCustom",
    [
        Input("x"),
        Input("bias", "optional"),
        Input("xs", "dynamic"),
        Input("shape", value_depend=True),
        Input("alpha", scalar="scalar"),
        Input("betas", scalar="scalar_list"),
    ],
    [Output("y"), Output("parts", "dynamic")],
    [
        Attr("scales", "VT_LIST_FLOAT"),
        Attr("flags", "VT_LIST_BOOL", (True,)),
        Attr("mode", "VT_STRING", "sum"),
        Attr("dtype", "VT_DATA_TYPE", 9),
        Attr("ks", "VT_LIST_INT", (1,)),
        Attr("eps", "VT_FLOAT", 1e-5),
        Attr("n", "VT_INT"),
    ],
)


@pytest.mark.slow
def test_the_cann_branch_passes_every_kind_of_argument_and_proves_the_call(tmp_path, monkeypatch):
    """The kernel's CANN branch makes what EXEC_NPU_CMD cannot convert (opsdk/aclnn.h) and
    compiles; swapping two arguments of different types, or passing the dtype as the
    ScalarType op-plugin makes an aclDataType of where aclnn takes an int64_t, fails the build
    with messages naming the parameters."""
    dtypes = {t: ("DT_FLOAT",) for t in ("x", "bias", "xs", "alpha", "betas", "y", "parts")}
    op = CannOp(RICH, {**dtypes, "shape": ("DT_INT32", "DT_INT64")})
    monkeypatch.setattr(cann, "read", lambda source, op_types=None: [op])  # as an OpDef gives it
    source = tmp_path / "rich_custom.cpp"
    source.write_text("// read by the stand-in for cann.read above\n")
    req = NewRequest(
        "rich_custom", style="cpp", namespace="fc_rich", out=tmp_path, from_cann=source
    )
    cpp_file = new(req).path / "rich_custom" / "rich_custom.cpp"
    text = cpp_file.read_text()
    call = re.search(r"^ *OPSDK_EXEC_NPU_CMD\((.*?)\);", text, re.S | re.M)
    args = [a.strip() for a in call.group(1).split(",")]
    assert args == (
        "aclnnRichCustom x bias xs shape_acl alpha_acl betas_acl scales_acl flags_acl mode_acl "
        "dtype_acl ks eps n y parts_acl".split()
    )
    flat = _flat(text)
    for local in (
        "const auto shape_acl = opsdk::aclnn::host_ints(shape);",  # a SymInt[]: aclIntArray
        "const auto alpha_acl = opsdk::aclnn::scalar(alpha);",
        "const opsdk::aclnn::ScalarList betas_acl(betas);",
        "const opsdk::aclnn::FloatArray scales_acl(scales);",
        "const opsdk::aclnn::BoolArray flags_acl(flags);",
        "std::string mode_str(mode); char* mode_acl = mode_str.data();",
        "const at::TensorList parts_acl(parts);",
    ):
        assert local in flat
    done = compile_cann_branch(cpp_file)
    assert done.returncode == 0, done.stderr

    eps, n = args.index("eps"), args.index("n")
    args[eps], args[n] = args[n], args[eps]
    args[args.index("dtype_acl")] = "dtype"
    cpp_file.write_text(text.replace(call.group(0), f"  OPSDK_EXEC_NPU_CMD({', '.join(args)});"))
    done = compile_cann_branch(cpp_file)
    assert done.returncode != 0
    failed = re.findall(r"static assertion failed: (.*)", done.stderr)
    assert failed == [
        "aclnnRichCustom parameter 9 is int64_t dtype",
        "aclnnRichCustom parameter 11 is double eps",
        "aclnnRichCustom parameter 12 is int64_t n",
    ], done.stderr
