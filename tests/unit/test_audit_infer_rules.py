"""The audit's infer check leaves alone what is a convention, not a defect, and follows
an input through the nodes that keep it (opsdk.audit.checks.infer): each rule planted."""

from types import SimpleNamespace

import pytest

from opsdk.audit.checks import infer as check
from opsdk.cann.infer.disagreements import Disagreement
from opsdk.offline.torchair import torchair_with_converters


def _dtype(cpp: str, fake: str, kind: str = "dtype") -> Disagreement:
    return Disagreement(kind, 0, cpp, fake, "likelier wrong: the Meta function")


@pytest.mark.parametrize(
    ("cpp", "fake", "carried"),
    [
        ("DT_FLOAT8_E8M0", "DT_UINT8", True),  # torch_npu's uint8 for float8_e8m0
        ("DT_INT4", "DT_INT32", True),  # packed int4 in int32
        ("DT_UINT64", "DT_INT64", True),  # torch computes no uint64
        ("DT_FLOAT16", "DT_INT32", False),  # torch has float16: a real disagreement
        ("DT_FLOAT16", "DT_FLOAT", False),
    ],
)
def test_a_dtype_torch_npu_carries_in_another_is_no_finding(cpp, fake, carried):
    assert check._carried(_dtype(cpp, fake)) is carried
    assert not check._carried(_dtype(cpp, fake, kind="shape"))


def test_an_output_the_cpp_leaves_rank_0_is_no_finding():
    answer = SimpleNamespace(shapes=[(), (2, 3)])
    unset = Disagreement("shape", 0, "[]", "[2, 3]", "likelier wrong: the C++")
    set_ = Disagreement("shape", 1, "[2, 3]", "[3, 2]", "likelier wrong: the C++")
    assert check._unset(unset, answer) and not check._unset(set_, answer)
    assert not check._unset(_dtype("DT_FLOAT16", "DT_FLOAT"), answer)


@pytest.fixture(scope="module")
def op_def():
    torchair_with_converters()
    from torchair._ge_concrete_graph.ge_ir_pb2 import OpDef

    def make(name: str, kind: str, inputs=(), meta: str | None = None):
        made = OpDef(name=name, type=kind, input=list(inputs))
        made.input_desc.add(name="x")
        out = made.output_desc.add(name="y")
        if meta is not None:
            out.attr["_meta"].s = meta.encode()
        return made

    return make


@pytest.mark.parametrize(("between", "found"), [("TensorMove", True), ("Cast", False)])
def test_an_unshaped_input_is_read_through_the_nodes_that_keep_it(op_def, between, found):
    """TorchAir leaves the descriptor of an input written by TensorMove unshaped; GE gets
    its producer's shape through it, not through a node that changes it."""
    meta = "Tensor(dtype=torch.float16, shape=torch.Size([4, 8])"
    graph = {
        "x": op_def("x", "Data", meta=meta),
        "moved": op_def("moved", between, inputs=["x:0"]),
    }
    node = op_def("op", "MyOp", inputs=["moved:0"])
    given = check._input(graph, node, 0)
    if found:
        assert given is not None and tuple(given.shape) == (4, 8), given
    else:
        assert given is None


CONVERTER = """\
@declare_supported([Support(F16(2, 8, 4), F16(8), F16(8), group=4)])
@register_fx_node_ge_converter(torch.ops.npu.norm_silu.default)
def conveter_norm_silu(self, weight, bias, group: int, eps: float = 1e-5, meta_outputs=None):
    return ge.NormSilu(self, weight, bias, num_groups=group, eps=eps)
"""


def test_an_attr_the_converter_sets_from_another_name_is_that_argument(op_def, tmp_path):
    """``ge.GroupNormSilu(..., num_groups=group)``: the exploration binds ``group`` to
    ``num_groups`` (npu_group_norm_silu went unexplored) when the node carries its value."""
    from types import SimpleNamespace

    from opsdk.audit import explored

    path = tmp_path / "norm_silu.py"
    path.write_text(CONVERTER)
    node = op_def("n", "NormSilu")
    node.attr["num_groups"].i = 4
    node.attr["eps"].f = 1e-5
    at = SimpleNamespace(path=str(path), line=1)  # the decorator's line, as the audit has it
    assert explored._renamed(at, {"group": 4, "eps": 1e-5}, node) == {"group": "num_groups"}
    assert explored._renamed(at, {"group": 2}, node) == {}  # the node has another value
    assert explored._renamed(None, {"group": 4}, node) == {}


NORM_DEF = """\
#include "register/op_def_registry.h"
namespace ops {
class NormLike : public OpDef {
public:
    explicit NormLike(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(NormLike);
}
"""


def test_the_exploration_takes_the_opdef_rows_beside_the_cpp_over_a_reg_op_s_sets(tmp_path):
    """ops-nn's GroupNormSilu: its REG_OP's sets read aligned had no mixed row; the OpDef
    beside the C++ has (fp16 x, fp32 gamma), the kernel's combination."""
    from opsdk._runtime.irdef import Input, IrDef, Output
    from opsdk.cann import CannOp

    host = tmp_path / "op_host"
    host.mkdir()
    (host / "norm_like_def.cpp").write_text(NORM_DEF)
    ir = IrDef("NormLike", inputs=[Input("x"), Input("gamma")], outputs=[Output("y")])
    both = ("DT_FLOAT16", "DT_FLOAT")
    reg_op = CannOp(ir, {"x": both, "gamma": both, "y": both}, rows=False)
    inference = SimpleNamespace(sources=[host / "norm_like_infershape.cpp"])
    opdef = check._with_rows(reg_op, inference)
    assert opdef.rows and opdef.dtypes["gamma"] == ("DT_FLOAT16", "DT_FLOAT"), opdef
    assert opdef.chips == ("ascend910b",)
    alone = tmp_path / "alone" / "op_host"
    alone.mkdir(parents=True)
    assert check._with_rows(reg_op, SimpleNamespace(sources=[alone / "x.cpp"])) is reg_op
