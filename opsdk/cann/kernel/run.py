"""Launch a compiled kernel on given bytes and a tiling, in a worker process (a crash of
the kernel is a finding, never this process's end), and read what it found.

A launch states the GM buffers by the entry's parameter names: the inputs' bytes (None:
an absent optional input), the outputs' sizes, and the tiling: what the op's TilingFunc
produced (the contract's TilingRun: ``data``, ``block_dim``, ``tiling_key``,
``workspace_sizes``). The answer is the outputs' bytes and the findings, each with the
block, the source line of the API call and what the hardware would have done.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from opsdk.cann.infer.call import Crashed, _Worker
from opsdk.cann.kernel import _native
from opsdk.cann.kernel.build import Built
from opsdk.errors import SpecError

__all__ = ["KINDS", "UB_BYTES", "Finding", "Kernel", "Launch"]

UB_BYTES = 196_608  # a 910B vector core's UB, the default chip's
# What each finding kind means on the hardware (the report's words).
KINDS = {
    "gm-out-of-bounds": "a GM read or write outside its buffer",
    "ub-overflow": "InitBuffer beyond the UB's size",
    "ub-out-of-bounds": "a UB access beyond the UB's size",
    "workspace-read-unwritten": "a read of workspace never written",
    "gm-write-race": "two cores writing the same GM bytes without atomics",
    "queue-misuse": "a queue used against its protocol (the core would hang)",
    "sync-hang": "a block ended while others wait at SyncAll",
    "exception": "a C++ exception out of the kernel",
    "crash": "the kernel ended its process",
}


@dataclass(frozen=True)
class Finding:
    kind: str  # a KINDS key
    block: int  # the first block it happened in (-1: not a block's)
    file: str  # the kernel source file of the API call ("?": unknown)
    line: int
    count: int  # how many times (calls) it happened
    what: str
    case: str = ""  # the launch's case, as the caller named it

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else "(no line)"
        times = f" ({self.count} times)" if self.count > 1 else ""
        case = f" of case {self.case}" if self.case else ""
        return f"{self.kind} in block {self.block}{case} at {where}: {self.what}{times}"


@dataclass(frozen=True)
class Launch:
    outputs: dict[str, bytes]  # by parameter name (empty after a crash)
    findings: tuple[Finding, ...]


class Kernel:
    """A compiled kernel, launched in a worker process of its own (started on the first
    launch and again after a crash)."""

    def __init__(self, built: Built):
        self.built = built
        self._worker: _Worker | None = None

    def launch(
        self,
        inputs: dict[str, bytes | None],
        outputs: dict[str, int],
        tiling,
        *,
        case: str = "",
        ub_bytes: int = UB_BYTES,
    ) -> Launch:
        """Run every block of the kernel on ``inputs`` (parameter name -> bytes; None: an
        absent optional input) with ``outputs`` (name -> size in bytes) and ``tiling`` (a
        TilingRun: its data is the ``tiling`` buffer, its workspace sizes' sum the
        ``workspace`` buffer's size), on a chip of ``ub_bytes`` of UB. ``case`` names the
        case in the findings."""
        buffers, carried = self._buffers(inputs, outputs, tiling)
        header = {
            "buffers": buffers,
            "block_dim": int(tiling.block_dim),
            "tiling_key": int(tiling.tiling_key),
            "ub_size": int(ub_bytes),
        }
        if self._worker is None:
            self._worker = _Worker(self.built.library, script=_native.__file__)
        try:
            reply = self._worker.exchange(b"launch\t%s\n" % json.dumps(header).encode(), *carried)
        except Crashed as crash:
            self._worker = None
            return Launch({}, (Finding("crash", -1, "?", 0, 1, f"the kernel {crash.how}", case),))
        start = reply.index(b"\n") + 1  # after the status
        at = reply.index(b"\n", start) + 1  # after the findings: the outputs' bytes
        findings, data = json.loads(reply[start:at]), {}
        for buffer in buffers:
            if buffer["kind"] == "output":
                data[buffer["name"]] = reply[at : at + buffer["size"]]
                at += buffer["size"]
        return Launch(data, tuple(_finding(line, case) for line in findings))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _buffers(self, inputs, outputs, tiling) -> tuple[list[dict], list[bytes]]:
        """The launch's buffers in the entry's parameter order (name, kind, size) and the
        bytes that travel with them (the inputs' and the tiling's, in that order)."""
        *data, workspace, tiling_name = self.built.entry.params
        unknown = sorted((set(inputs) | set(outputs)) - set(data))
        missing = [n for n in data if n not in inputs and n not in outputs]
        if unknown or missing:
            raise SpecError(
                f"{self.built.entry.name} takes {', '.join(data)}: "
                + (
                    f"no parameter {', '.join(unknown)}"
                    if unknown
                    else f"give {', '.join(missing)}"
                )
            )
        buffers, carried = [], []
        for name in data:
            if name in outputs:
                buffers.append({"name": name, "kind": "output", "size": int(outputs[name])})
            elif inputs[name] is None:
                buffers.append({"name": name, "kind": "absent", "size": 0})
            else:
                buffers.append({"name": name, "kind": "input", "size": len(inputs[name])})
                carried.append(inputs[name])
        buffers.append(
            {"name": workspace, "kind": "workspace", "size": int(sum(tiling.workspace_sizes))}
        )
        buffers.append({"name": tiling_name, "kind": "tiling", "size": len(tiling.data)})
        carried.append(bytes(tiling.data))
        return buffers, carried


def _finding(line: str, case: str) -> Finding:
    """A finding line the launcher wrote (``finding<TAB>kind<TAB>block<TAB>file...``)."""
    _, kind, block, file, number, count, what = line.split("\t", 6)
    return Finding(kind, int(block), file, int(number), int(count), what, case)
