"""Definition of the op: its schema and which kernel serves which device.

Schema:
    my_inplace_add(Tensor(a!) x, Tensor y) -> ()

In-place: the op writes x (marked ``Tensor(a!)``) and returns nothing for it, which is what
auto-functionalization needs to put it in a graph.

The package's other modules refer to the op as ``OP``, defined here.
"""

import torch

from .kernels import my_inplace_add_npu, my_inplace_add_reference

LIB = torch.library.Library("opsdk_examples", "FRAGMENT")
LIB.define("my_inplace_add(Tensor(a!) x, Tensor y) -> ()")
LIB.impl("my_inplace_add", my_inplace_add_npu, "PrivateUse1")
LIB.impl("my_inplace_add", my_inplace_add_reference, "CPU")

# The op's OpOverload, which the package's other modules import.
OP = torch.ops.opsdk_examples.my_inplace_add.default
