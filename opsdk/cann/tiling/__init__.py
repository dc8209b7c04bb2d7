"""An AscendC op's own tiling, offline: compile its ``op_host`` TilingFunc against opsdk's
stand-ins of CANN's tiling API (the TilingContext, the chip's platform API, the
tiling-data macros, template tiling keys) and run it for a case on a chip, in a worker
process, with what it set judged (a crash, a failure return, a block dim the chip cannot
launch, tiling data longer than declared).

:mod:`.sources` finds an op's tiling in its project, :mod:`.build` compiles and caches it,
:mod:`.run` runs it for a case into a :class:`TilingRun` (what the kernel twin consumes).
"""

from opsdk.cann.tiling.build import INCLUDE, TILING, build
from opsdk.cann.tiling.run import (
    CAPACITY,
    Case,
    Field,
    Finding,
    TilingLayout,
    TilingLibrary,
    TilingRun,
    workspace_size,
)
from opsdk.cann.tiling.sources import TilingSource, find, find_all

__all__ = [
    "CAPACITY",
    "INCLUDE",
    "TILING",
    "Case",
    "Field",
    "Finding",
    "TilingLayout",
    "TilingLibrary",
    "TilingRun",
    "TilingSource",
    "build",
    "find",
    "find_all",
    "workspace_size",
]
