"""An AscendC op's own vector kernel, offline: compile ``op_kernel/*.cpp`` for the CPU
against opsdk's stand-in of AscendC's kernel API (``include/``) and run it with every
block as a thread, the hardware's limits checked: GM out of bounds (guard zones),
UB overflow (an allocator at the chip's UB size), workspace read before written
(poisoned), two cores writing the same bytes without atomics, queue misuse.

:mod:`.build` compiles and caches a kernel, :mod:`.run` launches it on bytes and a tiling
(the contract's TilingRun) in a worker process and reads the findings.
"""

from opsdk.cann.kernel.build import (
    CTYPES,
    INCLUDE,
    Built,
    Entry,
    absent_dtypes,
    build,
    entry_of,
    template_args,
    tiling_header,
    toolkit,
)
from opsdk.cann.kernel.run import KINDS, UB_BYTES, Filled, Finding, Kernel, Launch, Member

__all__ = [
    "CTYPES",
    "INCLUDE",
    "KINDS",
    "UB_BYTES",
    "Built",
    "Entry",
    "Filled",
    "Finding",
    "Kernel",
    "Launch",
    "Member",
    "absent_dtypes",
    "build",
    "entry_of",
    "template_args",
    "tiling_header",
    "toolkit",
]
