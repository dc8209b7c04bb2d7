"""The layout contract of an op's outputs: contiguous, whatever the inputs' layouts.

An aclnn kernel writes into outputs that op-plugin allocates from sizes and options
alone (``OpPreparation::apply_tensor_without_format``), and GE graph outputs are
contiguous too; so the outputs of an Ascend op are contiguous. opsdk's contract
follows: the npu kernel returns contiguous outputs, and the fake function says so.
An aten expression keeps a permuted input's layout (``x * scale`` does), so an npu
kernel written with aten ops ends with ``.contiguous()``; every :mod:`opsdk.meta`
helper returns contiguous tensors, while ``torch.empty_like(x)`` keeps ``x``'s
layout. Inputs may have any layout.

What is checked is that the kernel and the fake function agree (opcheck's
``test_faketensor``): torch_npu's own Meta functions often use ``torch.empty_like``,
so a real op whose stand-in kernel keeps the input's layout too is consistent, and
passes. When they disagree, :func:`stride_mismatch` says which side departs from
the contract.
"""

from __future__ import annotations

import torch

from opsdk.harness.cell import CellFailure
from opsdk.harness.variants.cases import Call, map_tensors, on_device, tensors_of

RULE = "an op's outputs are contiguous, as an aclnn kernel's are"
KERNEL_FIX = "end the npu kernel with .contiguous()"
FAKE_FIX = (
    "the fake must return the strides the kernel returns: use meta.same_as(x) or "
    "x.new_empty(x.shape) in fake.py (opsdk.meta's helpers are contiguous; "
    "torch.empty_like(x) keeps x's layout unless given memory_format=torch.contiguous_format)"
)


def _layout(t: torch.Tensor) -> str:
    return f"strides {t.stride()} ({'' if t.is_contiguous() else 'not '}contiguous)"


def _same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal strides where they matter: dims of size 1 (or in an empty tensor) have none."""
    if a.numel() == 0:
        return True
    return all(n == 1 or s == t for n, s, t in zip(a.shape, a.stride(), b.stride(), strict=True))


def _fake_outputs(op, call: Call):
    """The fake function's outputs for ``call``, as opcheck's ``test_faketensor`` makes them."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        fake = lambda t: mode.from_tensor(t, static_shapes=True)  # noqa: E731
        return op(*map_tensors(call.args, fake), **map_tensors(call.kwargs, fake))


def stride_mismatch(op, call: Call, device: str) -> CellFailure | None:
    """Which output's layout differs between the kernel and the fake function on ``call``
    moved to ``device``, and which of the two breaks the contract (``eager`` for the
    kernel, ``fake`` for the fake function); None if they agree or either raises (other
    checks say why)."""
    kernel_call = on_device(call, device)
    try:
        real = tensors_of(op(*kernel_call.args, **kernel_call.kwargs))
        fake = tensors_of(_fake_outputs(op, on_device(call, device)))
    except Exception:  # noqa: BLE001 - a raising kernel or fake is reported elsewhere
        return None
    for i, (r, f) in enumerate(zip(real, fake, strict=False)):
        if r.shape != f.shape or _same_strides(r, f):
            continue
        layer, fix = ("eager", KERNEL_FIX) if not r.is_contiguous() else ("fake", FAKE_FIX)
        return CellFailure(
            layer,
            f"output {i} (sizes {list(r.shape)}): the npu kernel returned {_layout(r)}, the "
            f"fake function {_layout(f)}; {RULE}: {fix}",
        )
    return None
