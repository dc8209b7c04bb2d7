"""GE IR definition of MyTrainAdd.

The GE op that OP lowers to: the op prototype CANN registers with
``REG_OP(MyTrainAdd)``, its inputs, outputs and attrs by name.
TorchAir's ``ge.custom_op`` checks the converter against it; offline, opsdk's
GE stand-in answers from it.
"""

from opsdk.irdef import Input, IrDef, Output, register

from .schema import OP

MY_TRAIN_ADD_IR = register(
    IrDef(
        op_type="MyTrainAdd",
        inputs=[Input("x"), Input("y")],
        outputs=[Output("out")],
        attrs=[],
        torch_op=OP.name(),
    )
)
