"""CANN's ``N`` beside a dynamic input counts it (AddN): no torch argument, which could
disagree with the list (a false pass: ``N=1`` with two tensors, which CANN rejects); the
converter and the aclnn call give the list's length, as TorchAir's converters do."""

from opsdk import cann
from opsdk.irdef import Attr, Input, IrDef, Output
from opsdk.scaffold import NewRequest, new
from opsdk.scaffold.cann_torch import torch_side

ADD_N = """REG_OP(AddN)
    .DYNAMIC_INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))
    .OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))
    .REQUIRED_ATTR(N, Int)
    .OP_END_FACTORY_REG(AddN)
"""


def test_n_counting_the_dynamic_input_is_no_argument():
    (op,) = cann.read(ADD_N)
    assert cann.counts(op.ir) == {"N": "x"}
    assert torch_side(op).schema == "(Tensor[] x) -> Tensor"


def test_an_n_that_counts_nothing_stays_an_argument():
    """Two dynamic inputs (which would N count?), or none: N is the op's own attr."""
    two = IrDef(
        "Two", [Input("a", "dynamic"), Input("b", "dynamic")], [Output("y")], [Attr("N", "VT_INT")]
    )
    assert cann.counts(two) == {}
    (op,) = cann.read(ADD_N.replace("DYNAMIC_INPUT", "INPUT"))
    assert cann.counts(op.ir) == {} and "(Tensor x, int N) -> Tensor" in torch_side(op).schema


def test_the_converter_and_the_aclnn_call_give_the_list_s_length(tmp_path):
    source = tmp_path / "add_n_proto.h"
    source.write_text(ADD_N)
    pkg = new(NewRequest("add_n", namespace="t_addn", out=tmp_path, from_cann=source)).path
    assert '"N": attr.Int(len(x))' in (pkg / "add_n" / "converter.py").read_text()
    req = NewRequest(
        "add_n", style="cpp", namespace="t_addn_c", out=tmp_path / "c", from_cann=source
    )
    cpp = (new(req).path / "add_n" / "add_n.cpp").read_text()
    assert "const int64_t N_acl = static_cast<int64_t>(x.size());" in cpp
    assert "OPSDK_EXEC_NPU_CMD(aclnnAddN, x, N_acl, out);" in cpp
