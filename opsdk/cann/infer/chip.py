"""Which chip an op's C++ inference runs as: some InferShape / InferDataType ask CANN's
platform API (``fe::PlatformInfoManager``: ``str_info.short_soc_version``) and infer
differently per chip (Ascend910B and Ascend950 do). A verdict is computed for one chip:
``OPSDK_CANN_CHIP`` if set (an ``AddConfig`` name: ``ascend950``), else the chip the
op's definition is read for (its ``AddConfig`` chips, the OpDef reader's preference),
else ``ascend910b`` (Atlas A2, what torch_npu runs on).

A tiling asks more of the chip (``platform_ascendc::PlatformAscendC``): its core counts
and memory sizes, which :func:`resources` gives (the one table of them).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from opsdk.cann.opdef import PREFERRED_CHIPS
from opsdk.errors import SpecError

__all__ = ["CHIPS", "ENV", "Chip", "chip", "resources", "soc_version"]

ENV = "OPSDK_CANN_CHIP"
_NAME = re.compile(r"ascend\w+")


def chip(configured: tuple[str, ...] = (), environ=os.environ) -> str:
    """The chip to infer as, for a definition configuring ``configured`` (``IrDef.chips``)."""
    asked = environ.get(ENV, "").strip()
    if asked:
        if not _NAME.fullmatch(asked):
            raise SpecError(
                f"{ENV}={asked!r} is not a chip: give its AddConfig name, e.g. ascend910b"
            )
        return asked
    return next((c for c in PREFERRED_CHIPS if c in configured), None) or (
        configured[0] if configured else PREFERRED_CHIPS[0]
    )


def soc_version(name: str) -> str:
    """CANN's short SoC version of a chip's ``AddConfig`` name (``ascend910b`` ->
    ``Ascend910B``, ``ascend910_93`` -> ``Ascend910_93``), what the platform API reports."""
    return "Ascend" + name[len("ascend") :].upper()


@dataclass(frozen=True)
class Chip:
    """What CANN's platform API reports of a chip to a tiling: its ``AddConfig`` name, the
    architecture (``platform_ascendc::NpuArch``: ``DAV_2201`` for Atlas A2/A3), its vector
    (AIV) and cube (AIC) core counts (a chip whose cores do both: the same count twice),
    its memories in bytes and the workspace the AscendC library reserves
    (``GetLibApiWorkSpaceSize``)."""

    name: str
    arch: str
    aiv: int
    aic: int
    ub: int
    l1: int
    l0a: int
    l0b: int
    l0c: int
    l2: int
    lib_workspace: int

    @property
    def soc(self) -> str:
        return soc_version(self.name)

    @property
    def vector_cores(self) -> int:
        """The cores a vector kernel's blocks run on (what ``GetCoreNumAiv`` reports)."""
        return self.aiv


_MIB = 1 << 20
_A2 = dict(aiv=48, aic=24, ub=196608, l1=524288, l0a=65536, l0b=65536, l0c=131072)
# A 910B2-like Atlas A2 (24 cube cores, 48 vector cores, UB 192 KiB), its A3 sibling, and a
# 310P (8 AI cores that do both, UB 256 KiB).
CHIPS = {
    c.name: c
    for c in (
        Chip("ascend910b", "DAV_2201", **_A2, l2=192 * _MIB, lib_workspace=16 * _MIB),
        Chip("ascend910_93", "DAV_2201", **_A2, l2=192 * _MIB, lib_workspace=16 * _MIB),
        Chip(
            "ascend310p", "DAV_2002", 8, 8, 262144, 1048576, 65536, 65536, 262144,
            l2=16 * _MIB, lib_workspace=2 * _MIB,
        ),
    )
}  # fmt: skip


def resources(name: str) -> Chip:
    """The resources of the chip named ``name`` (an ``AddConfig`` name)."""
    found = CHIPS.get(name)
    if found is None:
        raise SpecError(f"opsdk knows no resources of chip {name!r}: use one of {', '.join(CHIPS)}")
    return found
