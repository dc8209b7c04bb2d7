"""GE IR definition of MyAdd.

The GE op opsdk_examples::my_add lowers to. Schema:
    my_add(Tensor x, Tensor y) -> Tensor

This is the op prototype CANN registers with ``REG_OP(MyAdd)``: its
inputs, outputs and attrs by name. TorchAir's ``ge.custom_op`` checks the
converter against it; offline, opsdk's GE stand-in answers from it.
"""

from opsdk.irdef import Input, IrDef, Output, register

MY_ADD_IR = register(
    IrDef(
        op_type="MyAdd",
        inputs=[Input("x"), Input("y")],
        outputs=[Output("out")],
        attrs=[],
        torch_op="opsdk_examples::my_add",
    )
)
