"""Definition of the op: its schema and which kernel serves which device.

Schema:
    my_add(Tensor x, Tensor y) -> Tensor

The package's other modules refer to the op as ``OP``, defined here.
"""

import torch

from .kernels import my_add_npu, my_add_reference

my_add = torch.library.custom_op(
    "opsdk_examples::my_add",
    my_add_npu,
    mutates_args=(),
    device_types="npu",
    schema="(Tensor x, Tensor y) -> Tensor",
)
my_add.register_kernel("cpu", my_add_reference)

# The op's OpOverload, which the package's other modules import.
OP = torch.ops.opsdk_examples.my_add.default
