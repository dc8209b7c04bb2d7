"""A team's op library whose converters lower to the AscendC ops of
tests/e2e/ascendc_project (each op's OpDef, InferShape, TilingFunc and kernel).

Planted for ``opsdk audit --ir``'s ``ascendc`` check (tests/e2e/test_audit_kernel.py):
``tail_add_past`` lowers to TailAddPast, whose last core writes its unaligned tail past
the end of z (DataCopy rounded up to 32 B); ``tail_add``, its twin, to TailAdd, which
moves the tail with DataCopyPad. Each declares an unaligned case (60 B) and an aligned one.
"""

import torch
from torchair import ge, register_fx_node_ge_converter
from torchair._ge_concrete_graph.ge_converter.converter_utils import (
    F32,
    Support,
    declare_supported,
)

_lib = torch.library.Library("team_kernel", "DEF")
_lib.define("tail_add(Tensor x, Tensor y) -> Tensor")
_lib.define("tail_add_past(Tensor x, Tensor y) -> Tensor")

_CASES = [Support(F32(3, 5), F32(3, 5)), Support(F32(4, 8), F32(4, 8))]


def _converter(name: str, op_type: str):
    @declare_supported(_CASES)
    @register_fx_node_ge_converter(getattr(torch.ops.team_kernel, name).default)
    def convert(x, y, meta_outputs=None):
        return ge.custom_op(op_type, inputs={"x": x, "y": y}, outputs=["z"])

    return convert


for _name, _type in [("tail_add", "TailAdd"), ("tail_add_past", "TailAddPast")]:
    torch.library.register_fake(f"team_kernel::{_name}", lambda x, y: torch.empty_like(x))
    _converter(_name, _type)
