"""Training steps: for an op with a backward, the columns check gradients too.

An op trains when it has an autograd formula (``torch.library.register_autograd``,
what ``opsdk new --autograd`` writes, or a C++ ``Autograd`` kernel). The columns
``eager``, ``aot_eager`` and ``ge`` then run each call as a training step: every
floating-point tensor input requires grad, each output gets a seeded random
gradient, and the inputs' gradients must equal the reference run's (the CPU
kernel for ``eager``, eager for the compiled columns, whose backward graph the
same backend compiles). ``opcheck`` checks the registration itself
(``test_autograd_registration``); ``npugraph_ex`` replays forward graphs only.
"""

from __future__ import annotations

import torch

from opsdk._runtime.spec import OpSchema
from opsdk.harness.variants.cases import Call, tensors_of


def trainable(spec: OpSchema) -> bool:
    """Whether the op has an autograd formula. A ``custom_op`` always has an
    Autograd kernel, which raises unless a backward was registered."""
    if spec.inplace:  # torch refuses autograd formulas for mutating ops
        return False
    opdef = torch._library.custom_ops.OPDEFS.get(spec.qualname)
    if opdef is not None:
        return opdef._backward_fn is not None
    return torch._C._dispatch_has_kernel_for_dispatch_key(spec.qualname, "Autograd")


def requires_grad(call: Call) -> list[torch.Tensor]:
    """Make the call's floating-point tensors require grad; return them in order."""
    leaves = [t for t in tensors_of([call.args, call.kwargs]) if t.is_floating_point()]
    for t in leaves:
        t.requires_grad_(True)
    return leaves


def gradients(outputs, inputs: list[torch.Tensor], seed: int) -> list[torch.Tensor | None]:
    """The inputs' gradients for seeded random output gradients (None: no gradient)."""
    outs = [t for t in tensors_of(outputs) if t.requires_grad]
    if not outs:
        return [None] * len(inputs)
    gen = torch.Generator().manual_seed(4321 + seed)
    grad_outs = [torch.randn(t.shape, generator=gen, dtype=t.dtype).to(t.device) for t in outs]
    return list(torch.autograd.grad(outs, inputs, grad_outs, allow_unused=True))
