"""TorchAir GE converter of the op.

The FX node of OP becomes the GE op MyCppAdd. The same code runs offline
(opsdk's GE stand-in) and on an NPU host (CANN).
"""

import torchair
from torchair import ge

from . import OP


@torchair.register_fx_node_ge_converter(OP)
def convert_my_cpp_add(
    x: ge.Tensor, y: ge.Tensor, meta_outputs: ge.TensorSpec | list[ge.TensorSpec] | None = None
) -> ge.Tensor:
    """Lower the FX node to the GE op MyCppAdd."""
    return ge.custom_op(
        "MyCppAdd",
        inputs={"x": x, "y": y},
        outputs=["out"],
    )
