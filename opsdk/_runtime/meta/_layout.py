"""The layout of an op's outputs: contiguous, whatever the inputs' layouts.

An aclnn kernel writes into outputs op-plugin allocates from sizes alone, so an
Ascend op's outputs are contiguous; ``opsdk check`` holds npu kernels and fake
functions to that. torch's own ops keep an input's layout instead (``x * s`` of a
permuted ``x`` is permuted): code that computes an output with them, such as a
reference standing in for a device kernel, passes it through :func:`contiguous`.
"""

from __future__ import annotations

import torch


def contiguous(outputs):
    """``outputs`` (a tensor, or a tuple or list of them; anything else as it is) with
    every tensor contiguous, as an aclnn kernel returns it. Works on real and fake
    tensors alike.
    Usage: ``return meta.contiguous(my_op_reference(x, gamma))``
    """
    if isinstance(outputs, torch.Tensor):
        return outputs.contiguous()
    if isinstance(outputs, (tuple, list)):
        return type(outputs)(contiguous(o) for o in outputs)
    return outputs
