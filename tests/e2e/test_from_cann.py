"""`opsdk new --from-cann`: a real CANN op's REG_OP in, a package that passes every column
once its reference kernel is written."""

import json
import re

import pytest
from real_ops import prototype
from scaffolded import compile_cann_branch

from opsdk.scaffold import NewRequest, cann, new
from opsdk.scaffold.ir_export import file_stem


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
    outcomes = {(r["backend"], r["shapes"]): r["status"] for r in run.report["results"]}
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


def test_a_type_attr_crosses_in_ges_numbering(opsdk_cli, tmp_path):
    """A REG_OP ``Type`` attr (ArgMaxD's ``dtype``, default DT_INT64) is a ``ScalarType``
    the converter hands to GE in GE's numbering, and the executor reads back as a torch
    dtype; a converter passing torch's numbering (int64 is 4, GE's DT_UINT8) fails in GE."""
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
        .replace("F32(2, 3)", "F32(2, 4, 3)")
        .replace("F16(2, 3), dimension=1", "F16(2, 4, 3), dimension=1, dtype=torch.int32")
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
    assert "output 0 is torch.uint8, TorchAir expects torch.int64" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("op_type", ["RmsNorm", "NLLLoss"])
def test_the_cpp_style_calls_aclnn_and_its_fake_runs_the_reference(tmp_path, op_type):
    """--style cpp: the npu kernel allocates the outputs as the fake shapes them and calls
    aclnn<OpType> (IR inputs, attrs, outputs) in the CANN branch, which compiles against the
    wheel's headers; NLLLoss has an optional input, an int and a str attr, two outputs."""
    (op,) = cann.read(prototype(op_type))
    name = file_stem(op.ir)
    source = tmp_path / f"{name}_proto.h"
    source.write_text(prototype(op_type))
    req = NewRequest(name, style="cpp", namespace="fc_cpp", out=tmp_path, from_cann=source)
    pkg = new(req).path / name
    cpp = (pkg / f"{name}.cpp").read_text()
    ir = op.ir
    args = ", ".join([*ir.ir_input_names, *ir.ir_attr_names, *(o.name for o in ir.outputs)])
    if op_type == "NLLLoss":
        args = args.replace("reduction", "reduction_c")
    assert f"EXEC_NPU_CMD(aclnn{op_type}, {args});" in cpp
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
    (aot,) = run.cells(backend="aot_eager")
    (ge,) = run.cells(backend="ge")
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
    """A sloppy msopgen file (keys of msopst's case format, a camelCase attr type, a missing
    param_type, text defaults): each repair is one `opsdk new: warning:` line, once."""
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
            {
                "name": "pads",
                "param_type": "optional",
                "type": "listInt",
                "default_value": "{0, 0}",
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
    assert len(warned) == 4 and len(run.stderr.splitlines()) == 4, run.stderr
    for needle in ("input 'x' has no param_type", "key 'dtype'", "'listInt'", "key 'value'"):
        assert sum(needle in line for line in warned) == 1, (needle, warned)
    schema = (tmp_path / "conv_custom" / "conv_custom" / "schema.py").read_text()
    assert "(Tensor x, *, int[] strides=[1, 1], bool bias=False, int groups=1) -> Tensor" in schema
