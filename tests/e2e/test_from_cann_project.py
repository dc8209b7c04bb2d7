"""`opsdk new --from-cann DIR`: an AscendC project (OpDef sources, a tiling header, CMake's
JSON) becomes one op package; nothing passes until the references are written, then the
whole matrix does."""

import re

import pytest

OPDEF = """\
#include "register/op_def_registry.h"

namespace ops {{
class {op} : public OpDef {{
public:
    explicit {op}(const char* name) : OpDef(name)
    {{
{body}
        this->AICore().AddConfig("ascend910b");
    }}
}};
OP_ADD({op});
}}  // namespace ops
"""
FLOATS = """.DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})"""
# One op each of the kinds: in place (a ref output), optional and dynamic inputs,
# list attrs, and a ScalarList input; with the reference each needs.
OPS = {
    "ScaleInplace": (
        f"""        this->Input("x").ParamType(REQUIRED){FLOATS};
        this->Output("x").ParamType(REQUIRED){FLOATS};
        this->Attr("alpha").AttrType(OPTIONAL).Float(2.0);""",
        "x.mul_(alpha)",
    ),
    "WeightedSum": (
        f"""        this->Input("xs").ParamType(DYNAMIC){FLOATS};
        this->Input("bias").ParamType(OPTIONAL){FLOATS};
        this->Output("y").ParamType(REQUIRED){FLOATS};""",
        "return sum(xs) if bias is None else sum(xs) + bias",
    ),
    "ShiftBy": (
        f"""        this->Input("x").ParamType(REQUIRED){FLOATS};
        this->Input("offsets").ParamType(REQUIRED).ScalarList()
            .DataType({{ge::DT_FLOAT, ge::DT_FLOAT}});
        this->Output("y").ParamType(REQUIRED){FLOATS};""",
        "return x + sum(offsets)",
    ),
    "SumDims": (
        f"""        this->Input("x").ParamType(REQUIRED){FLOATS};
        this->Output("y").ParamType(REQUIRED){FLOATS};
        this->Attr("dims").AttrType(OPTIONAL).ListInt({{1}});
        this->Attr("keepdim").AttrType(OPTIONAL).Bool(false);""",
        "return x.sum(dims, keepdim=keepdim)",
    ),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("proj") / "MyOps"
    (root / "op_host").mkdir(parents=True)
    for op, (body, _) in OPS.items():
        stem = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", op).lower()
        (root / "op_host" / f"{stem}.cpp").write_text(OPDEF.format(op=op, body=body))
    (root / "op_host" / "sum_dims_tiling.h").write_text("#pragma once\nstruct SumDimsTiling {};\n")
    (root / "op_host" / "sum_dims_tiling.cpp").write_text('#include "sum_dims_tiling.h"\n')
    (root / "CMakePresets.json").write_text('{"version": 3, "configurePresets": []}')
    return root


def test_a_project_is_one_package_that_passes_only_once_its_references_are_written(
    project, opsdk_cli, tmp_path
):
    run = opsdk_cli("new", "--from-cann", project, "--namespace", "fc_proj")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "my_ops"
    modules = {"scale_inplace": pkg / "my_ops"}  # the first by name: the top-level modules
    modules |= {n: pkg / "my_ops" / n for n in ("shift_by", "sum_dims", "weighted_sum")}
    for name, folder in modules.items():
        assert (folder / "ir.py").is_file(), name
    assert "Tensor(a!) x, float alpha=2." in (modules["scale_inplace"] / "schema.py").read_text()
    schema = (modules["weighted_sum"] / "schema.py").read_text()
    assert "Tensor[] xs, Tensor? bias" in schema
    assert "int[] dims=[1], bool keepdim=False" in (modules["sum_dims"] / "schema.py").read_text()
    assert "Tensor x, Scalar[] offsets" in (modules["shift_by"] / "schema.py").read_text()

    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    assert run.code == 1 and {r["status"] for r in run.report["results"]} == {"fail"}
    assert all("implement me" in r["message"] for r in run.report["results"])

    for name, folder in modules.items():
        op = "".join(w.capitalize() for w in name.split("_"))
        kernels = folder / "kernels.py"
        text, count = re.subn(r"raise ImplementMe\(__file__, .*\)", OPS[op][1], kernels.read_text())
        assert count == 1, f"{name}: only the reference is left to write"
        kernels.write_text(text.replace("ImplementMe, ", ""))
    run = opsdk_cli("check", pkg, json_report=True)
    failed = [
        f"{r['op']} {r['column']}-{r['shapes']}: {r['status']} {r['message']}"
        for r in run.cells()
        # a usage context that cannot apply (buffer under dynamic shapes) is a skip
        if r["status"] != "pass" and not (r["status"] == "skip" and "not apply" in r["message"])
    ]
    assert run.code == 0 and not failed, "\n".join(failed) or run.stderr
    assert sum(r["status"] == "pass" for r in run.cells()) > 60
    ops = {r["op"].split(".")[0] for r in run.report["results"]}
    assert ops == {f"fc_proj::{n}" for n in modules}
    backends = {r["column"] for r in run.report["results"]}
    assert backends == {"eager", "opcheck", "aot_eager", "ge", "npugraph_ex"}

    # A converter that drops an attr or an optional input fails in ge: the specs' last case
    # passes what the dtype rows leave to CANN's defaults.
    converter = modules["scale_inplace"] / "converter.py"
    converter.write_text(converter.read_text().replace('"alpha": attr.Float(alpha),', ""))
    converter = modules["weighted_sum"] / "converter.py"
    converter.write_text(converter.read_text().replace('"bias": bias', '"bias": None'))
    argv = ("--backend", "ge", "--shapes", "static", "--contexts", "none")
    run = opsdk_cli("check", pkg, *argv, json_report=True)
    failed = {r["op"].split("::")[1].split(".")[0]: r for r in run.cells() if r["status"] == "fail"}
    assert set(failed) == {"scale_inplace", "weighted_sum"}, run.stdout
    assert all(r["layer"] == "ge-exec" for r in failed.values()), run.stdout
