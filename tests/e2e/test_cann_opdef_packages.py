"""AscendC OpDef files made into packages by `opsdk new` (which runs ruff) and the real
production files copied out of the mirrors (git archive): the process tests of
tests/unit/test_cann_opdef.py."""

from __future__ import annotations

from pathlib import Path

import mirrors
import pytest
from opdef_text import BF16, F16, F32, opdef, read_one

from opsdk import cann
from opsdk._runtime.irdef import Output
from opsdk.cann.exports import opdef_cpp
from opsdk.errors import SpecError
from opsdk.scaffold.cann_torch import torch_side


def test_the_scalar_input_is_a_torch_scalar_fed_to_its_ir_input(tmp_path):
    """``.Scalar()`` is a torch Scalar, which the generated converter passes as the GE
    input of its name; an int ValueDepend input is a host SymInt[]; a ScalarList is a Scalar[]
    (one 1-D host input); a dynamic Scalar is refused."""
    from opsdk.scaffold import NewRequest, new

    body = """
        this->Input("x").DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("sizes").ValueDepend(REQUIRED).DataType({ge::DT_INT64, ge::DT_INT64});
        this->Input("alpha").ParamType(OPTIONAL).Scalar().To(ge::DT_FLOAT);
        this->Output("y").DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
"""
    source = tmp_path / "scaled_def.cpp"
    source.write_text(opdef(body, name="Scaled"))
    assert (
        torch_side(read_one(source)).schema == "(Tensor x, SymInt[] sizes, Scalar? alpha) -> Tensor"
    )
    pkg = new(NewRequest("scaled", namespace="t_scalar", out=tmp_path, from_cann=source)).path
    converter = (pkg / "scaled" / "converter.py").read_text()
    assert '"alpha": scalar_input(alpha)' in converter
    listed = read_one(opdef(body.replace("ParamType(OPTIONAL).Scalar()", "ScalarList()")))
    assert torch_side(listed).schema == "(Tensor x, SymInt[] sizes, Scalar[] alpha) -> Tensor"
    dynamic = read_one(opdef(body.replace("ParamType(OPTIONAL)", "ParamType(DYNAMIC)")))
    with pytest.raises(SpecError, match="input 'alpha' is a dynamic Scalar"):
        torch_side(dynamic)


# Real production files of CANN's public op repositories, each for a construct.
REAL = [
    ("ops-nn", "optim/apply_adagrad/op_host/apply_adagrad_def.cpp"),  # constants, ref output
    ("ops-nn", "experimental/norm/fused_add_rms_norm/op_host/fused_add_rms_norm_def.cpp"),
    ("ops-nn", "conv/conv2d_v2/op_host/conv2d_v2_def.cpp"),  # std::map, DT_MAX, a method
    ("ops-nn", "foreach/foreach_round_off_number/op_host/foreach_round_off_number_def.cpp"),
    ("ops-nn", "foreach/foreach_lerp_scalar/op_host/foreach_lerp_scalar_def.cpp"),  # header
    ("ops-nn", "optim/lamb_next_right/op_host/lamb_next_right_def.cpp"),  # range for
    ("ops-nn", "norm/add_layer_norm/op_host/add_layer_norm_def.cpp"),  # macros
    ("ops-transformer", "attention/flash_attention_score/op_host/flash_attention_score_def.cpp"),
]


@pytest.fixture(scope="module")
def real_files(tmp_path_factory):
    """The REAL files and their op_host folders' neighbours, copied out of the mirrors."""
    root = tmp_path_factory.mktemp("real")
    folders = {
        name: {"foreach/foreach_utils/op_host"} if name == "ops-nn" else set() for name, _ in REAL
    }
    for name, path in REAL:
        folders[name].add(str(Path(path).parent))
    for name, wanted in folders.items():
        mirrors.archive(mirrors.git_dir(f"hicann+{name}"), root / name, *sorted(wanted))
    return root


def test_real_production_files(real_files):
    ops = {}
    for name, path in REAL:
        (op,) = cann.read(real_files / name / path)
        ops[op.ir.op_type] = op
    adagrad = ops["ApplyAdagrad"]
    assert adagrad.ir.outputs == (Output("var"),) and adagrad.dtypes["grad"] == (BF16, F16, F32)
    assert ops["FusedAddRmsNorm"].dtypes["rstd"] == (F32,) * 3  # the 910b config's
    conv = ops["Conv2DV2"]  # only ascend950, from a std::map by chip; DT_MAX replaced
    assert conv.dtypes["x"][:4] == (BF16, F16, F32, "DT_HIFLOAT8")
    assert conv.formats["filter"][-1] == "HWCN"
    assert ops["ForeachRoundOffNumber"].dtypes["roundMode"] == ("DT_INT8",) * 4
    lerp = ops["ForeachLerpScalar"]  # DtypeTensor2Scalar from the foreach header
    assert lerp.ir.inputs[2].scalar == "scalar" and set(lerp.dtypes["weight"]) == {F32}
    assert len(ops["LambNextRight"].ir.inputs) == 6
    assert ops["AddLayerNorm"].formats["x1"] == ("ND",) * len(ops["AddLayerNorm"].dtypes["x1"])
    fas = ops["FlashAttentionScore"]  # no input of its own: the 910b config's
    assert [i.name for i in fas.ir.inputs][:3] == ["query", "key", "value"]
    for op in ops.values():
        assert cann.read(opdef_cpp(op)) == [op]


def test_versioned_parameters_are_recorded_and_the_cpp_style_refuses_them(tmp_path):
    """``.Version(n)`` inputs and attrs are GE's like any other, but CANN's build leaves them
    out of aclnn<Op> (they are aclnn<Op>V<n>'s): the cpp style would call the wrong API."""
    from opsdk.scaffold import NewRequest, new

    body = """
        this->Input("x").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("group").ParamType(OPTIONAL).DataType({ge::DT_INT64})
            .Format({ge::FORMAT_ND}).Version(1);
        this->Output("y").DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("mode").AttrType(OPTIONAL).Int(0).Version(VERSION_TWO);
"""
    source = tmp_path / "vers_def.cpp"
    source.write_text(opdef(body, name="Vers", head="constexpr int VERSION_TWO = 2;\n"))
    op = read_one(source)
    assert op.versions == {"group": 1, "mode": 2}
    assert [i.name for i in op.ir.inputs] == ["x", "group"] and op.ir.attrs[0].name == "mode"
    with pytest.raises(SpecError, match=r"group \(.Version\(1\)\), mode \(.Version\(2\)\): CANN"):
        new(NewRequest("vers", style="cpp", out=tmp_path / "cpp", from_cann=source))
    assert not (tmp_path / "cpp").exists()
    assert new(NewRequest("vers", out=tmp_path / "py", from_cann=source)).path.is_dir()
