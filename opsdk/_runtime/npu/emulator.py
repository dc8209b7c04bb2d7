"""An emulated ``npu`` device for CPU-only torch, so npu code paths run offline.

PrivateUse1 is renamed ``npu``. Memory is real CPU memory labelled as npu
memory: a CPU buffer's DLPack capsule is relabelled to ``kDLExtDev`` and
imported, giving an ``npu:0`` tensor whose storage owns the buffer. Aten ops run
on CPU aliases of that memory (one boxed fallback, also registered directly for
ops that would otherwise take a slower composite path), so writes land in the
npu tensors and views stay views. A non-aten op reaching the fallback is
refused: a custom op needs its own npu kernel, exactly as on a real NPU.

Pinned to torch 2.13: it calls private APIs (``_construct_storage_from_data_pointer``,
``torch._C._acc.create_empty_tensor``, ``OpOverload._op_dk``) and applies the
patches of :mod:`opsdk._runtime.patches` (backend registration, storage constructor).
Here: ``torch.npu`` and :func:`install`; the memory, fallback and kernels it installs
live in ``_memory``, ``_fallback`` and ``_kernels``. The rest of torch_npu's ``npu``
API (streams, graphs, ``is_current_stream_capturing``, ...) is torch_npu's own Python,
which :mod:`opsdk._runtime.npu.torch_npu` adds to ``torch.npu``.
"""

from __future__ import annotations

import threading
import types
from typing import Any

import torch

from opsdk._runtime import patches
from opsdk._runtime.npu import _kernels as npu_kernels
from opsdk._runtime.npu._fallback import (
    cpu_preferred,
    direct_kernel,
    fallback,
    generator,
)
from opsdk._runtime.npu._memory import DEVICE, NpuDeviceError, check_index


class _DeviceContext:
    """``torch.npu.device(i)``: there is one card, so only checks the index."""

    def __init__(self, device: Any) -> None:
        _set_device(device)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _set_device(device: Any) -> None:
    if device is None or isinstance(device, int):
        index = device
    else:
        index = torch.device(device).index
    if index is not None and index != 0:
        check_index(torch.device(DEVICE, index))


def _manual_seed(seed: int) -> None:
    generator.manual_seed(int(seed))


def _seed() -> None:
    generator.seed()


def _get_rng_state(device: Any = DEVICE) -> torch.Tensor:
    return generator.get_state()


def _set_rng_state(state: torch.Tensor, device: Any = DEVICE) -> None:
    generator.set_state(state)


def _build_module() -> types.ModuleType:
    """The module that becomes ``torch.npu``; other runtime pieces add to it."""
    module = types.ModuleType(f"torch.{DEVICE}", "Emulated Ascend npu device (opsdk, CPU memory).")
    api: dict[str, Any] = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "_lazy_init": lambda: None,
        "_is_in_bad_fork": lambda: False,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": _set_device,
        "device": _DeviceContext,
        "synchronize": lambda device=None: None,
        "get_device_name": lambda device=None: "Emulated NPU (opsdk, CPU memory)",
        "manual_seed": _manual_seed,
        "manual_seed_all": _manual_seed,
        "seed": _seed,
        "seed_all": _seed,
        "initial_seed": generator.initial_seed,
        "get_rng_state": _get_rng_state,
        "set_rng_state": _set_rng_state,
        "get_rng_state_all": lambda: [_get_rng_state()],
        "set_rng_state_all": lambda states: _set_rng_state(states[0]),
        "get_amp_supported_dtype": lambda: [torch.float16, torch.bfloat16],
        "is_bf16_supported": lambda: True,
    }
    for name, value in api.items():
        setattr(module, name, value)
    return module


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    """What torch asks a registered backend before using it: always there."""

    def is_available(self) -> bool:
        return True

    def has_primary_context(self, dev_id: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    """Device guard for a single card: nothing to switch."""

    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.PrivateUse1


# --------------------------------------------------------------------------- install

_installed: dict[str, Any] = {}
_install_lock = threading.Lock()


def is_installed() -> bool:
    """Whether ``install()`` has made ``npu`` a device in this process."""
    return "module" in _installed


def npu_module() -> types.ModuleType:
    """``torch.npu`` of the emulated device (installing it first)."""
    install()
    return _installed["module"]


def install() -> None:
    """Make ``npu`` a device backed by CPU memory; idempotent, process-wide, no undo."""
    with _install_lock:
        if is_installed():
            return
        name = torch._C._get_privateuse1_backend_name()
        if name != "privateuseone" or hasattr(torch, DEVICE):
            raise NpuDeviceError(
                f"cannot emulate the {DEVICE} device: PrivateUse1 is already named '{name}' "
                f"or torch.{DEVICE} exists (is the real torch_npu loaded?)"
            )
        module = _build_module()
        patches.setup_privateuse1_backend(DEVICE, module, _Hooks(), _Guard())
        patches.npu_storage_constructor()
        kernels = torch.library.Library("aten", "IMPL")
        for qualname in cpu_preferred():
            kernels.impl(qualname.partition("::")[2], direct_kernel(qualname), "PrivateUse1")
        npu_kernels.register(kernels)
        boxed = torch.library.Library("_", "IMPL")
        boxed.fallback(fallback, "PrivateUse1")
        _installed.update(module=module, libraries=(kernels, boxed))
