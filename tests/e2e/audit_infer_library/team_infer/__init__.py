"""A team's op library (torch.library, register_fake, TorchAir converters calling
ge.custom_op) whose CANN project (../cann) has each op's C++ InferShape/InferDataType.

Planted for ``opsdk audit --ir`` (tests/e2e/test_audit_infer.py): ``row_sum``'s Meta
function drops the dim its C++ keeps as 1; ``to_float``'s keeps the input's dtype where
its C++ types the output float32; ``row_mean`` agrees with its C++; ``resize_to``'s C++
reads its value-depend ``size`` (not checked); ``one_row``'s C++ refuses more than one
row, which the derived case has (not TorchAir's: a note, not a finding), and its Meta
function takes any number of rows (the exploration's finding: a 2-row case).
"""

import torch
from torchair import ge, register_fx_node_ge_converter

_lib = torch.library.Library("team_infer", "DEF")
_lib.define("row_sum(Tensor x) -> Tensor")
_lib.define("row_mean(Tensor x) -> Tensor")
_lib.define("to_float(Tensor x) -> Tensor")
_lib.define("resize_to(Tensor x, Tensor size) -> Tensor")
_lib.define("one_row(Tensor x) -> Tensor")


@torch.library.register_fake("team_infer::row_sum")
def _row_sum_fake(x):
    return x.new_empty(x.shape[:-1])


@torch.library.register_fake("team_infer::row_mean")
def _row_mean_fake(x):
    return x.new_empty(x.shape[:-1])


@torch.library.register_fake("team_infer::to_float")
def _to_float_fake(x):
    return torch.empty_like(x)


@torch.library.register_fake("team_infer::resize_to")
def _resize_to_fake(x, size):
    return torch.empty_like(x)


@torch.library.register_fake("team_infer::one_row")
def _one_row_fake(x):
    return torch.empty_like(x)


def _unary(op_type):
    def convert(x, meta_outputs=None):
        return ge.custom_op(op_type, inputs={"x": x}, outputs=["y"])

    return convert


for _name, _type in [
    ("row_sum", "RowSum"),
    ("row_mean", "RowMean"),
    ("to_float", "ToFloat"),
    ("one_row", "OneRow"),
]:
    register_fx_node_ge_converter(getattr(torch.ops.team_infer, _name).default)(_unary(_type))


@register_fx_node_ge_converter(torch.ops.team_infer.resize_to.default)
def _convert_resize_to(x, size, meta_outputs=None):
    return ge.custom_op("ResizeTo", inputs={"x": x, "size": size}, outputs=["y"])
