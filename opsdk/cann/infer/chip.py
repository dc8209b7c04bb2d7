"""Which chip an op's C++ inference runs as: some InferShape / InferDataType ask CANN's
platform API (``fe::PlatformInfoManager``: ``str_info.short_soc_version``) and infer
differently per chip (Ascend910B and Ascend950 do). A verdict is computed for one chip:
``OPSDK_CANN_CHIP`` if set (an ``AddConfig`` name: ``ascend950``), else the chip the
op's definition is read for (its ``AddConfig`` chips, the OpDef reader's preference),
else ``ascend910b`` (Atlas A2, what torch_npu runs on).
"""

from __future__ import annotations

import os
import re

from opsdk.cann.opdef import PREFERRED_CHIPS
from opsdk.errors import SpecError

__all__ = ["ENV", "chip", "soc_version"]

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
