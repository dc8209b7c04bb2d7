"""Definition of the op: its schema and which kernel serves which device.

Schema:
    my_train_add(Tensor x, Tensor y) -> Tensor

The package's other modules refer to the op as ``OP``, defined here.
"""

import torch

from .kernels import my_train_add_npu, my_train_add_reference

my_train_add = torch.library.custom_op(
    "custom::my_train_add",
    my_train_add_npu,
    mutates_args=(),
    device_types="npu",
    schema="(Tensor x, Tensor y) -> Tensor",
)
my_train_add.register_kernel("cpu", my_train_add_reference)

# The op's OpOverload, which the package's other modules import.
OP = torch.ops.custom.my_train_add.default
