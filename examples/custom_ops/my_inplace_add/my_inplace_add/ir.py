"""GE IR definition of MyInplaceAdd.

The GE op that OP lowers to: the op prototype CANN registers with
``REG_OP(MyInplaceAdd)``, its inputs, outputs and attrs by name.
TorchAir's ``ge.custom_op`` checks the converter against it; offline, opsdk's
GE stand-in answers from it.
Each input the op writes in place has an output of the same name.
"""

from opsdk.irdef import Input, IrDef, Output, register

from .schema import OP

MY_INPLACE_ADD_IR = register(
    IrDef(
        op_type="MyInplaceAdd",
        inputs=[Input("x"), Input("y")],
        outputs=[Output("x")],
        attrs=[],
        torch_op=OP.name(),
    )
)
