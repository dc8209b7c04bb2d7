"""Launch a compiled kernel on given bytes and a tiling, in a worker process (a crash of
the kernel is a finding, never this process's end), and read what it found.

A launch states the GM buffers by the entry's parameter names: the inputs' bytes (None:
an absent optional input), the outputs' sizes, a dynamic (tensor list) parameter's
tensors as :class:`Member` values, and the tiling: what the op's TilingFunc produced
(the contract's TilingRun: ``data``, ``block_dim``, ``tiling_key``,
``workspace_sizes``). The answer is the outputs' bytes and the findings, each with the
block, the source line of the API call and what the hardware would have done.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from opsdk.cann.infer.call import Crashed, _Worker
from opsdk.cann.kernel import _native
from opsdk.cann.kernel.build import Built
from opsdk.errors import SpecError

__all__ = ["KINDS", "UB_BYTES", "Filled", "Finding", "Kernel", "Launch", "Member"]

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
class Member:
    """One tensor of a dynamic (tensor list) parameter: its shape, which the list's block
    tells the kernel (``ListTensorDesc``), and its bytes (an input's) or size in bytes (an
    output's). Each member is a GM buffer of its own, named ``<param>[<index>]``."""

    shape: tuple[int, ...]
    data: bytes | int


@dataclass(frozen=True)
class Filled:
    """An output the runtime fills before the kernel runs (OpDef ``.InitValue``): its
    size in bytes and one element's bytes, repeated over it (not poison)."""

    size: int
    element: bytes


@dataclass(frozen=True)
class Launch:
    # by parameter name; a tensor list's, its members' in order (empty after a crash)
    outputs: dict[str, bytes | tuple[bytes, ...]]
    findings: tuple[Finding, ...]


class Kernel:
    """A compiled kernel, launched in a worker process of its own (started on the first
    launch and again after a crash)."""

    def __init__(self, built: Built):
        self.built = built
        self._worker: _Worker | None = None

    def launch(
        self,
        inputs: dict[str, bytes | None | Sequence[Member]],
        outputs: dict[str, int | Filled | Sequence[Member]],
        tiling,
        *,
        case: str = "",
        ub_bytes: int = UB_BYTES,
    ) -> Launch:
        """Run every block of the kernel on ``inputs`` (parameter name -> bytes; None: an
        absent optional input; a tensor list: its members) with ``outputs`` (name -> size
        in bytes, a :class:`Filled` one, or a tensor list's members) and ``tiling`` (a
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
        findings, raw = json.loads(reply[start:at]), {}
        for buffer in buffers:
            if buffer["kind"] in ("output", "filled"):
                raw[buffer["name"]] = reply[at : at + buffer["size"]]
                at += buffer["size"]
        data: dict[str, bytes | tuple[bytes, ...]] = dict(raw)
        for name, value in outputs.items():
            if not isinstance(value, int | Filled):  # a tensor list: its members' bytes
                listed = [f"{name}[{i}]" for i in range(len(value))]
                for member in listed:
                    del data[member]
                data[name] = tuple(raw[member] for member in listed)
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
        buffers: list[dict] = []
        carried: list[bytes] = []
        members: list[tuple[str, str, bytes | int]] = []
        for name in data:
            given = outputs[name] if name in outputs else inputs[name]
            kind = "output" if name in outputs else "input"
            if given is None:
                buffers.append({"name": name, "kind": "absent", "size": 0})
            elif isinstance(given, int):
                buffers.append({"name": name, "kind": "output", "size": given})
            elif isinstance(given, Filled):
                fill = given.element.hex()
                buffers.append({"name": name, "kind": "filled", "size": given.size, "fill": fill})
            elif isinstance(given, bytes | bytearray):
                buffers.append({"name": name, "kind": "input", "size": len(given)})
                carried.append(bytes(given))
            else:  # a tensor list: its block here, its members after the parameters
                first = len(data) + 2 + len(members)
                block = _list_block(given, first)
                buffers.append({"name": name, "kind": "list", "size": len(block)})
                carried.append(block)
                members += [(f"{name}[{i}]", kind, m.data) for i, m in enumerate(given)]
        buffers.append(
            {"name": workspace, "kind": "workspace", "size": int(sum(tiling.workspace_sizes))}
        )
        buffers.append({"name": tiling_name, "kind": "tiling", "size": len(tiling.data)})
        carried.append(bytes(tiling.data))
        for name, kind, value in members:  # an input's bytes, an output's size (Member)
            size = value if isinstance(value, int) else len(value)
            buffers.append({"name": name, "kind": kind, "size": size})
            if not isinstance(value, int):
                carried.append(bytes(value))
        return buffers, carried


def _list_block(members: Sequence[Member], first: int) -> bytes:
    """A tensor list's GM block as CANN's runtime lays one out for a dynamic parameter
    (what ``ListTensorDesc`` reads): the byte offset of its pointer table, each tensor's
    description (a word with its dim count, then its dims), then one pointer per tensor.
    Here each pointer slot holds the index of the member's buffer (from ``first``): the
    launcher puts that buffer's GM address there."""
    words = []
    for member in members:
        words += [1 << 32 | len(member.shape), *member.shape]
    table = 8 * (1 + len(words))
    return struct.pack(
        f"<{1 + len(words) + len(members)}q",
        table,
        *words,
        *range(first, first + len(members)),
    )


def _finding(line: str, case: str) -> Finding:
    """A finding line the launcher wrote (``finding<TAB>kind<TAB>block<TAB>file...``)."""
    _, kind, block, file, number, count, what = line.split("\t", 6)
    return Finding(kind, int(block), file, int(number), int(count), what, case)
