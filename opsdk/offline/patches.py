"""Every patch opsdk applies to a private torch, TorchAir or torch_npu API, in one place.

Each is a small function saying what it patches, why, and the version it was
checked against; the callers (the npu device install, the TorchAir bring-up)
apply them at the moment they need them. A new torch or torch-npu release is
checked here first.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from opsdk.offline.npu._memory import DEVICE, NpuDeviceError, check_index

__all__ = [
    "npu_storage_constructor",
    "run_torchair_patches_first",
    "setup_privateuse1_backend",
]

_native_storage_new = torch.UntypedStorage.__new__


def _storage_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``UntypedStorage(..., device="npu")``: torch would use a null allocator and crash."""
    device = kwargs.get("device")
    if device is None or torch.device(device).type != DEVICE:
        return _native_storage_new(cls, *args, **kwargs)
    check_index(torch.device(device))
    if kwargs.get("allocator") is not None:
        raise NpuDeviceError(f"{DEVICE} storages cannot take a custom allocator")
    if not args:
        return torch.empty((0,), dtype=torch.uint8, device=DEVICE).untyped_storage()
    if isinstance(args[0], int) and len(args) == 1:
        return torch.empty((args[0],), dtype=torch.uint8, device=DEVICE).untyped_storage()
    cpu = _native_storage_new(cls, *args)
    return torch.empty((0,), dtype=torch.uint8).set_(cpu).to(DEVICE).untyped_storage()


def npu_storage_constructor() -> None:
    """Replace ``torch.UntypedStorage.__new__`` so ``UntypedStorage(n, device="npu")``
    allocates through the emulated device (other devices go to torch's own).

    Why: torch builds a storage for a Python PrivateUse1 backend with a null
    allocator, which crashes. Checked against torch 2.13.0.
    """
    torch.UntypedStorage.__new__ = staticmethod(_storage_new)  # type: ignore[method-assign]


def setup_privateuse1_backend(module: types.ModuleType, hooks: Any, guard: Any) -> None:
    """Name PrivateUse1 ``npu`` with ``module`` as ``torch.npu`` through torch's private
    ``torch.utils.backend_registration._setup_privateuseone_for_python_backend``, and
    generate the ``UntypedStorage.npu()``-style methods.

    Why: it is the one entry point that registers a Python backend's hooks and device
    guard together. Checked against torch 2.13.0.
    """
    torch.utils.backend_registration._setup_privateuseone_for_python_backend(
        DEVICE, backend_module=module, hook=hooks, device_guard=guard
    )
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=False, for_module=False, for_packed_sequence=False, for_storage=True
    )


def run_torchair_patches_first(torchair: types.ModuleType, config: Any) -> None:
    """Run TorchAir's one-time patches of torch before npugraph_ex's copy of them.

    Why: both register a Python kernel for ``aten.to.other`` under AutogradPrivateUse1.
    npugraph_ex skips the registration when it finds one; TorchAir does not, so a
    process that compiled with npugraph_ex first failed its first GE compile
    ("Trying to override a python impl"). Creating a GE backend (``config``: the GE
    column's own) applies TorchAir's patches. Checked against torch-npu 2.13.0.
    """
    torchair.get_npu_backend(compiler_config=config)
