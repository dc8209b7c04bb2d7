"""A team's op library as teams write one without opsdk (no OPS, no opsdk import): schemas
with torch.library, Meta functions with register_fake, TorchAir converters calling
ge.custom_op. Its CANN definitions are in ../cann (REG_OP, OpDef, msopgen JSON).

Planted for ``opsdk audit`` (tests/e2e/test_audit_library.py): ``scale_add`` is correct;
``team_rms``'s converter leaves out the attr its OpDef requires; ``swap_add``'s feeds the
inputs its msopgen JSON declares in the other order.
"""

import torch
from torchair import ge, register_fx_node_ge_converter

_lib = torch.library.Library("team", "DEF")
_lib.define("scale_add(Tensor x, Tensor y, float alpha=1.0) -> Tensor")
_lib.define("team_rms(Tensor x, Tensor gamma, float epsilon=1e-06) -> Tensor")
_lib.define("swap_add(Tensor x1, Tensor x2) -> Tensor")


@torch.library.register_fake("team::scale_add")
def _scale_add_fake(x, y, alpha=1.0):
    return torch.empty_like(x)


@torch.library.register_fake("team::team_rms")
def _team_rms_fake(x, gamma, epsilon=1e-06):
    return torch.empty_like(x)


@torch.library.register_fake("team::swap_add")
def _swap_add_fake(x1, x2):
    return torch.empty_like(x1)


@register_fx_node_ge_converter(torch.ops.team.scale_add.default)
def _convert_scale_add(x, y, alpha: float = 1.0, meta_outputs=None):
    return ge.custom_op(
        "ScaleAdd", inputs={"x": x, "y": y}, outputs=["z"], attrs={"alpha": ge.attr.Float(alpha)}
    )


@register_fx_node_ge_converter(torch.ops.team.team_rms.default)
def _convert_team_rms(x, gamma, epsilon: float = 1e-06, meta_outputs=None):
    return ge.custom_op("TeamRms", inputs={"x": x, "gamma": gamma}, outputs=["y"])


@register_fx_node_ge_converter(torch.ops.team.swap_add.default)
def _convert_swap_add(x1, x2, meta_outputs=None):
    return ge.custom_op("SwapAdd", inputs={"x2": x2, "x1": x1}, outputs=["y"])
