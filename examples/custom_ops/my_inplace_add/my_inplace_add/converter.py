"""TorchAir GE converter of the op.

The FX node of OP becomes the GE op MyInplaceAdd. The same code runs offline
(opsdk's GE stand-in) and on an NPU host (CANN).
In-place: the IR output of the written input shares its name; TorchAir lowers
``auto_functionalized_v2`` around this op, so the converter returns only the
op's own outputs.
"""

import torchair
from torchair import ge

from .schema import OP


@torchair.register_fx_node_ge_converter(OP)
def convert_my_inplace_add(
    x: ge.Tensor, y: ge.Tensor, meta_outputs: ge.TensorSpec | list[ge.TensorSpec] | None = None
) -> None:
    """Lower the FX node to the GE op MyInplaceAdd."""
    ge.custom_op(
        "MyInplaceAdd",
        inputs={"x": x, "y": y},
        outputs=["x"],
    )
