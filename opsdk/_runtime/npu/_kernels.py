"""Explicit npu kernels: allocation, copies, resize and restride, convolution hooks, and
metadata ops whose CPU kernel serves npu tensors as they are."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._ops import OpOverload

from opsdk._runtime.npu._fallback import aten, fallback
from opsdk._runtime.npu._memory import (
    CPU_KEY,
    DEVICE,
    SET,
    aliases,
    as_npu,
    bytes_of,
    check_index,
    host,
)

_RESIZE = aten.resize_.default
_TO_COPY = aten._to_copy.default


def _empty(
    size: Sequence[int],
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
    memory_format: torch.memory_format | None = None,
) -> torch.Tensor:
    check_index(device)
    fmt = memory_format or torch.contiguous_format
    return as_npu(torch.empty(size, dtype=dtype, memory_format=fmt))


def _empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
) -> torch.Tensor:
    check_index(device)
    return as_npu(torch.empty_strided(size, stride, dtype=dtype))


def _to_copy(
    self: torch.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: torch.memory_format | None = None,
) -> torch.Tensor:
    """Convert on the CPU in one step; there is no pinned memory, so never pin."""
    check_index(device)
    to_npu = device.type == DEVICE if device is not None else not self.is_cpu
    out = _TO_COPY(host(self), dtype=dtype, layout=layout, memory_format=memory_format)
    return as_npu(out) if to_npu else out


def _copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """Copy within or across cpu/npu on the CPU; done here so conj/neg views don't recurse."""
    host(self).copy_(host(src))
    return self


def _convolution(*args: Any) -> torch.Tensor:
    """``convolution_overrideable``: the hook torch leaves to devices is plain CPU conv here."""
    return fallback(aten.convolution.default, *args)


def _convolution_backward(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[torch.Tensor | None, ...]:
    """``convolution_backward_overrideable`` as CPU ``convolution_backward``."""
    bias_size = weight.size(1) * groups if transposed else weight.size(0)
    return fallback(
        aten.convolution_backward.default,
        grad_output,
        input,
        weight,
        [bias_size],
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        output_mask,
    )


# Ops whose CPU kernel only edits or builds metadata over the tensor's own storage
# (set_ also checks the storage's device matches), so it serves npu tensors as they
# are: no CPU-alias round trip, and the results share the npu storage.
METADATA_OPS = (
    "view",
    "as_strided",
    "_reshape_alias",
    "unfold",
    "view_as_real",
    "view_as_complex",
    "set_.source_Storage_storage_offset",
    "set_.source_Storage",
    "set_.source_Tensor",
)


def cpu_kernel(op: OpOverload) -> Callable[..., torch.Tensor]:
    """Call ``op``'s CPU kernel directly on the npu arguments."""

    def kernel(*args: Any, **kwargs: Any) -> torch.Tensor:
        return op._op_dk(CPU_KEY, *args, **kwargs)

    return kernel


def _as_strided_(
    self: torch.Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> torch.Tensor:
    """Restride in place (the composite the squeeze_/transpose_ family ends in)."""
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return SET._op_dk(CPU_KEY, self, self.untyped_storage(), offset, size, stride)


def _set_empty(self: torch.Tensor) -> torch.Tensor:
    """``set_()``: the CPU kernel would attach a CPU storage, so attach an npu one."""
    empty = torch.empty((0,), dtype=torch.uint8, device=DEVICE).untyped_storage()
    return SET._op_dk(CPU_KEY, self, empty, 0, (0,), ())


def _resize_(
    self: torch.Tensor, size: Sequence[int], *, memory_format: torch.memory_format | None = None
) -> torch.Tensor:
    """Grow into a bigger npu buffer (old bytes kept), then restride with the CPU kernel."""
    numel = math.prod(size)
    needed = (self.storage_offset() + numel) * self.element_size() if numel else 0
    storage = self.untyped_storage()
    if needed > storage.nbytes():
        grown = torch.empty((needed,), dtype=torch.uint8, device=DEVICE)
        aliases.tensor(grown)[: storage.nbytes()].copy_(aliases.tensor(bytes_of(self)))
        SET._op_dk(
            CPU_KEY,
            self,
            grown.untyped_storage(),
            self.storage_offset(),
            self.size(),
            self.stride(),
        )
    return _RESIZE._op_dk(CPU_KEY, self, size, memory_format=memory_format)


def register(library: torch.library.Library) -> None:
    """Register the explicit kernels as ``PrivateUse1`` kernels in ``library`` (aten IMPL)."""
    library.impl("empty.memory_format", _empty, "PrivateUse1")
    library.impl("empty_strided", _empty_strided, "PrivateUse1")
    library.impl("copy_", _copy_, "PrivateUse1")
    library.impl("_to_copy", _to_copy, "PrivateUse1")
    library.impl("resize_", _resize_, "PrivateUse1")
    library.impl("set_", _set_empty, "PrivateUse1")
    library.impl("as_strided_", _as_strided_, "PrivateUse1")
    library.impl("convolution_overrideable", _convolution, "PrivateUse1")
    library.impl("convolution_backward_overrideable", _convolution_backward, "PrivateUse1")
    for qualname in METADATA_OPS:
        name, _, overload = qualname.partition(".")
        op = getattr(getattr(aten, name), overload or "default")
        library.impl(qualname, cpu_kernel(op), "PrivateUse1")
