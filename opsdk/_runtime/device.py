"""Which "npu" device this process has: torch_npu's, or opsdk's emulated one.

Op packages call :func:`ensure_npu` before registering kernels for "npu", so
the same package imports unchanged on an NPU host and on a laptop.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass

EMULATE_ENV = "OPSDK_EMULATE_NPU"


@dataclass(frozen=True)
class NpuInfo:
    kind: str  # "real" or "emulated"
    torch_npu_version: str | None
    reason: str  # why this kind was chosen

    @property
    def real(self) -> bool:
        return self.kind == "real"


_info: NpuInfo | None = None


def ensure_npu() -> NpuInfo:
    """Make ``torch.device("npu")`` usable; idempotent.

    torch_npu is used when it imports; otherwise (or when ``OPSDK_EMULATE_NPU=1``)
    opsdk's emulated device is installed. torch_npu is only tried when it is
    installed, because a failed import after torch has loaded its backends is
    what breaks a CPU-only environment.
    """
    global _info
    if _info is None:
        info = choose()
        if not info.real:
            _install_emulated()
        _info = info
    return _info


def choose() -> NpuInfo:
    """The device :func:`ensure_npu` chose, or would choose, installing nothing: `opsdk
    doctor` reports it without importing torch where torch_npu is not installed."""
    return _info or _detect()


def _refuse_beside_torch_npu() -> None:
    """The emulated device cannot share a process with a loaded torch_npu (torch loads it
    by itself on an NPU host: device-backend autoload), which already owns PrivateUse1."""
    import sys

    from opsdk._runtime.locator import STANDIN_MARKER
    from opsdk.errors import SetupError

    loaded = sys.modules.get("torch_npu")
    if loaded is not None and not getattr(loaded, STANDIN_MARKER, False):
        raise SetupError(
            f"{EMULATE_ENV}=1, but torch_npu is already loaded (torch autoloads it on an NPU "
            f"host): set TORCH_DEVICE_BACKEND_AUTOLOAD=0 as well to emulate, or unset {EMULATE_ENV}"
        )


def _install_emulated() -> None:
    """Install opsdk's emulated device, with torch_npu's ``npu`` API there on first use."""
    if os.environ.get(EMULATE_ENV) == "1":
        _refuse_beside_torch_npu()
    from opsdk._runtime.npu import emulator
    from opsdk._runtime.npu import torch_npu as torch_npu_standin

    emulator.install()
    torch_npu_standin.install_on_first_use(emulator.npu_module())


def _emulated(reason: str) -> NpuInfo:
    return NpuInfo("emulated", None, reason)


def _detect() -> NpuInfo:
    if os.environ.get(EMULATE_ENV) == "1":
        return _emulated(f"{EMULATE_ENV}=1")
    if importlib.util.find_spec("torch_npu") is None:
        return _emulated("torch_npu is not installed")
    try:
        torch_npu = importlib.import_module("torch_npu")
    except Exception as err:  # noqa: BLE001 - any import failure means: no usable NPU stack
        return _emulated(f"import torch_npu failed: {err}".splitlines()[0])
    return NpuInfo("real", getattr(torch_npu, "__version__", "unknown"), "torch_npu imported")
