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

A kernel writes into its inputs; it never rebinds one (``x.set_(result)``, ``x.data =``),
which gives the caller's tensor another layout than the graph's (a written input keeps
its sizes and strides in the fake function and under functionalization): the next op
reads the new strides in eager and the old ones in a graph. :func:`rebound` says so
(layer ``eager``), wherever the symptom shows first.
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


def geometry(call: Call) -> list[tuple]:
    """The sizes, strides and storage offset of each tensor of ``call`` (:func:`tensors_of`
    order): what a kernel must leave as it was, see :func:`rebound`."""
    return [
        (tuple(t.shape), t.stride(), t.storage_offset())
        for t in tensors_of([call.args, call.kwargs])
    ]


def rebound(op, before: list[tuple], call: Call) -> CellFailure | None:
    """The failure of a kernel that changed the geometry of an input of ``call`` (its
    arguments after the kernel ran; ``before``: their :func:`geometry` before), else None."""
    for name, was, now in zip(_tensor_names(op, call), before, geometry(call), strict=True):
        if was == now:
            continue
        changes = [
            f"{what} {a} -> {b}"
            for what, a, b in zip(("sizes", "strides", "storage offset"), was, now, strict=True)
            if a != b
        ]
        return CellFailure(
            "eager",
            f"the npu kernel changed a written input's layout ({name}: {', '.join(changes)}): "
            "write into it (copy_, out=) instead of rebinding it (set_, .data =); the graph "
            "keeps its layout, so the next op reads other strides than in eager",
        )
    return None


def rebinding(op, call: Call, device: str) -> CellFailure | None:
    """:func:`rebound` for the kernel of ``op`` on a fresh copy of ``call`` on ``device``;
    None if the kernel raises too (other checks say why)."""
    fresh = on_device(call, device)
    before = geometry(fresh)
    try:
        op(*fresh.args, **fresh.kwargs)
    except Exception:  # noqa: BLE001 - a raising kernel is reported elsewhere
        return None
    return rebound(op, before, fresh)


def _tensor_names(op, call: Call) -> list[str]:
    """A name per tensor of ``call`` (:func:`tensors_of` order): the schema's argument
    names where ``op`` has a schema, else its position."""
    schema = getattr(op, "_schema", None)
    if schema is None:
        return [f"tensor input {i}" for i in range(len(tensors_of([call.args, call.kwargs])))]
    names = (a.name for a in schema.arguments)
    bound = {**dict(zip(names, call.args, strict=False)), **call.kwargs}
    return [repr(name) for name, value in bound.items() for _ in tensors_of(value)]


def fake_outputs(op, call: Call):
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
        fake = tensors_of(fake_outputs(op, on_device(call, device)))
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
