"""An Int attr CANN sets to a data type (``.Int(ge::DT_INT32)``, ``.ATTR(d, Int, DT_INT32)``):
GE's IR keeps an Int, torch takes a ``ScalarType`` (what a torch user writes), the
converter gives GE its number, and the exports write the data type back."""

from opsdk import cann
from opsdk.cann.exports import opdef_cpp, reg_op
from opsdk.irdef import Attr
from opsdk.scaffold.cann_torch import torch_side

REG = """REG_OP(CastTo)
    .INPUT(x, TensorType({DT_FLOAT}))
    .OUTPUT(y, TensorType({DT_INT32, DT_INT64}))
    .ATTR(dst, Int, DT_INT32)
    .ATTR(n, Int, 3)
    .OP_END_FACTORY_REG(CastTo)
"""


def test_an_int_set_to_a_data_type_is_a_torch_dtype():
    (op,) = cann.read(REG)
    assert op.ir.attrs == (Attr("dst", "VT_INT", 3, dtype=True), Attr("n", "VT_INT", 3))
    assert torch_side(op).schema == "(Tensor x, ScalarType dst=int32, int n=3) -> Tensor"


def test_the_exports_write_the_data_type_back():
    (op,) = cann.read(REG)
    assert ".ATTR(dst, Int, DT_INT32)" in reg_op(op) and ".ATTR(n, Int, 3)" in reg_op(op)
    text = opdef_cpp(cann.CannOp(op.ir, {"x": ("DT_FLOAT",) * 2, "y": ("DT_INT32", "DT_INT64")}))
    assert 'this->Attr("dst").AttrType(OPTIONAL).Int(ge::DT_INT32);' in text
    (back,) = cann.read(text)
    assert back.ir.attrs == op.ir.attrs
