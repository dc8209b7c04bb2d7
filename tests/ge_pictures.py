"""GE graph bodies for the `build` fixture (tests/conftest.py) and the IR definitions of
their ops: for tests/unit/test_graph_pictures.py and tests/e2e/test_graph_pictures_svg.py."""

from __future__ import annotations

import torch

from opsdk.irdef import Input, IrDef, Output, register

NS = "opsdk_unit_pictures"
_lib = torch.library.Library(NS, "DEF")
_lib.define("shift(Tensor x, SymInt n) -> Tensor")
SHIFT = torch.ops.opsdk_unit_pictures.shift.default
register(
    IrDef("Shift", inputs=[Input("x"), Input("n")], outputs=[Output("y")], torch_op=SHIFT.name())
)
register(IrDef("WriteX", inputs=[Input("x"), Input("y")], outputs=[Output("x")], torch_op="t::w"))
register(IrDef("NotRef", inputs=[Input("x"), Input("y")], outputs=[Output("z")], torch_op="t::n"))
register(IrDef("TwoOut", inputs=[Input("x")], outputs=[Output("a"), Output("b")], torch_op="t::2"))


def inplace_graph(op_type, output="x"):
    """The graph of an op that writes ``x`` in place when its ``output`` is named ``x``."""

    def body(ge_, raw, Data, DataType):
        x = Data(index=0, dtype=DataType.DT_FLOAT, shape=[2, 3], placement="NPU", node_name="a0")
        y = Data(index=1, dtype=DataType.DT_FLOAT, shape=[2, 3], placement="NPU", node_name="a1")
        out = ge_.custom_op(op_type, inputs={"x": raw.TensorMove(x), "y": y}, outputs=[output])
        raw.NetOutput([out])

    return body
