"""Kernels of the op (schema in schema.py): the npu (PrivateUse1) kernel and the CPU reference.

The npu kernel is what runs on the device: on an NPU host, this is where the
aclnn call goes; offline it runs on opsdk's emulated npu device. Its outputs are
contiguous, as an aclnn kernel's are, whatever the inputs' layouts (an aten
expression such as ``x * s`` keeps a permuted input's layout: end it with
``.contiguous()``). The CPU reference is the oracle every column is compared
with: keep it simple and obviously right.
"""

import torch


def my_train_add_npu(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The op on npu tensors."""
    return torch.add(x, y).contiguous()  # contiguous, as an aclnn output and fake.py are


def my_train_add_reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The op on CPU tensors: the semantics the npu kernel must match."""
    return torch.add(x, y)
