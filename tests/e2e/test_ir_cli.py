"""`opsdk ir`: the CLI exports an op package's IR, run in a fresh process as users run it."""

import json
from pathlib import Path


def test_cli_exports_the_package_ir(opsdk_cli, tmp_path):
    example = Path(__file__).parents[2] / "examples" / "custom_ops" / "my_inplace_add"
    run = opsdk_cli("ir", example, "--format", "reg_op")
    assert run.code == 0, run.stderr
    assert (
        "REG_OP(MyInplaceAdd)" in run.stdout
        and ".OUTPUT(x, TensorType({DT_FLOAT, DT_FLOAT16, DT_BF16, DT_INT32}))" in run.stdout
    )
    run = opsdk_cli("ir", example, "--out", tmp_path / "proto")
    assert run.code == 0, run.stderr
    [op] = json.loads((tmp_path / "proto" / "my_inplace_add.json").read_text())
    assert [d["name"] for d in op["output_desc"]] == ["x"]
    # The dtypes its specs feed it, int32 included, in both formats.
    assert op["input_desc"][1]["type"] == ["float", "float16", "bfloat16", "int32"]


def test_cli_writes_the_aclnn_api_cann_generates(opsdk_cli, tmp_path):
    """`--format aclnn`: aclnn_<op>.h as CANN's build writes it; the input the op writes in
    place is its Ref, and its output no parameter."""
    example = Path(__file__).parents[2] / "examples" / "custom_ops" / "my_inplace_add"
    run = opsdk_cli("ir", example, "--format", "aclnn", "--out", tmp_path / "api")
    assert run.code == 0, run.stderr
    header = (tmp_path / "api" / "aclnn_my_inplace_add.h").read_text()
    assert (
        "aclnnStatus aclnnMyInplaceAddGetWorkspaceSize(\n"
        "    aclTensor *xRef,\n"
        "    const aclTensor *y,\n"
        "    uint64_t *workspaceSize,\n"
        "    aclOpExecutor **executor);"
    ) in header
