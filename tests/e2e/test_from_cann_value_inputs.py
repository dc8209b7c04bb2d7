"""A CANN op whose inputs CANN reads on the host, end to end: `opsdk new --from-cann`, the
reference written, every cell passes; the cpp style's aclnn call compiles (host ints as
aclIntArray, a counted N as the list's length)."""

import re

import pytest
from scaffolded import compile_cann_branch

from opsdk.scaffold import NewRequest, new

# Made up, in CANN's OpDef layout: Cumsum's shape of op (an axis CANN reads on the host).
CUMSUM = """#include "register/op_def_registry.h"
namespace ops {
static const std::vector<ge::DataType> X = {ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_UINT64,
                                            ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_UINT64};
static const std::vector<ge::DataType> AXIS = {ge::DT_INT32, ge::DT_INT32, ge::DT_INT32,
                                               ge::DT_INT64, ge::DT_INT64, ge::DT_INT64};
class RunSum : public OpDef {
public:
    explicit RunSum(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType(X);
        this->Input("axis").ParamType(REQUIRED).ValueDepend(OPTIONAL).DataType(AXIS);
        this->Output("y").ParamType(REQUIRED).DataType(X);
        this->Attr("reverse").AttrType(OPTIONAL).Bool(false);
    }
};
OP_ADD(RunSum);
}
"""


def test_a_value_input_op_passes_every_cell_once_its_reference_is_written(opsdk_cli, tmp_path):
    source = tmp_path / "run_sum_def.cpp"
    source.write_text(CUMSUM)
    run = opsdk_cli("new", "--from-cann", source, "--namespace", "e2e_vd")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "run_sum" / "run_sum"
    assert "run_sum(Tensor x, SymInt axis, bool reverse=False)" in (pkg / "schema.py").read_text()
    specs = (pkg / "specs.py").read_text()
    assert "Support(F32(2, 3), Fixed(1))" in specs and "U64(" not in specs  # no CPU cumsum
    kernels = pkg / "kernels.py"
    text, count = re.subn(
        r"raise ImplementMe\(__file__, \"run_sum_reference\".*\)",
        "src = x.flip(axis) if reverse else x\n"
        "    out = torch.cumsum(src, axis, dtype=x.dtype)\n"
        "    return out.flip(axis) if reverse else out",
        kernels.read_text(),
    )
    assert count == 1
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    run = opsdk_cli("check", tmp_path / "run_sum", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["status"] for r in run.report["results"]} == {"pass"}
    assert len(run.report["results"]) == 15


OPDEF = """#include "register/op_def_registry.h"
namespace ops {
class HostInts : public OpDef {
public:
    explicit HostInts(const char* name) : OpDef(name)
    {
        this->Input("xs").ParamType(DYNAMIC).DataType({ge::DT_FLOAT});
        this->Input("axis").ValueDepend(REQUIRED).DataType({ge::DT_INT64});
        this->Input("sizes").ParamType(OPTIONAL).ValueDepend(OPTIONAL).DataType({ge::DT_INT32});
        this->Output("y").DataType({ge::DT_FLOAT});
        this->Attr("N").AttrType(REQUIRED).Int();
    }
};
OP_ADD(HostInts);
}
"""


@pytest.mark.slow
def test_the_cann_branch_passes_host_ints_and_a_counted_n(tmp_path):
    source = tmp_path / "host_ints_def.cpp"
    source.write_text(OPDEF)
    req = NewRequest("host_ints", style="cpp", namespace="e2e_hi", out=tmp_path, from_cann=source)
    cpp_file = new(req).path / "host_ints" / "host_ints.cpp"
    flat = re.sub(r"\s*\n\s*", " ", cpp_file.read_text())
    assert "const int64_t N_acl = static_cast<int64_t>(xs.size());" in flat
    assert "const auto axis_acl = opsdk::aclnn::host_ints(axis);" in flat
    assert "const auto sizes_acl = opsdk::aclnn::host_ints(sizes);" in flat
    assert "OPSDK_EXEC_NPU_CMD(aclnnHostInts, xs, axis_acl, sizes_acl, N_acl, out);" in flat
    for cann_branch in (True, False):
        done = compile_cann_branch(cpp_file, cann=cann_branch)
        assert done.returncode == 0, done.stderr


CAST = """#include "register/op_def_registry.h"
namespace ops {
class CastTo : public OpDef {
public:
    explicit CastTo(const char* name) : OpDef(name)
    {
        this->Input("x").DataType({ge::DT_FLOAT, ge::DT_FLOAT});
        this->Output("y").DataType({ge::DT_INT32, ge::DT_INT64});
        this->Attr("dst").AttrType(OPTIONAL).Int(ge::DT_INT32);
    }
};
OP_ADD(CastTo);
}
"""


def test_a_dtype_attr_is_a_scalar_type_and_ge_gets_its_number(opsdk_cli, tmp_path):
    """The offline GE executor turns GE's number (DT_INT64 is 9) back into the torch dtype
    (torch's ScalarType 9 is complex64): a non-default dtype passes every cell."""
    source = tmp_path / "cast_to_def.cpp"
    source.write_text(CAST)
    assert opsdk_cli("new", "--from-cann", source, "--namespace", "e2e_dt").code == 0
    pkg = tmp_path / "cast_to" / "cast_to"
    assert '"dst": attr.Int(torch_type_to_ge_type(dst))' in (pkg / "converter.py").read_text()
    kernels = pkg / "kernels.py"
    text = re.sub(
        r"raise ImplementMe\(\s*__file__, \"cast_to_reference\"[^)]*\)",
        "return (x * 4).to(dst)",
        kernels.read_text(),
    )
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    specs = pkg / "specs.py"
    specs.write_text(
        "import torch\n\n"
        + specs.read_text().replace(
            "Support(F32(2, 3)),", "Support(F32(2, 3)),\n        Support(F32(2, 3), torch.int64),"
        )
    )
    run = opsdk_cli("check", tmp_path / "cast_to", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    assert {r["status"] for r in run.report["results"]} == {"pass"}
