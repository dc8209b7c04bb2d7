"""The native side of a kernel launch: the compiled kernel library loaded with ctypes and
asked to launch, in a worker process serving a parent's requests (run as a script), so a
crash of the kernel ends the worker, never the parent. Standard library only.

Protocol: :class:`opsdk.cann.infer.call._Worker`'s framing, the buffers' bytes as they
are (no text encoding: a launch moves megabytes). A request is a line
``launch<TAB><json>`` (the buffers in the entry's parameter order: name, kind, size;
block_dim, tiling_key, ub_size) followed by the bytes of the buffers whose kind is in
:data:`CARRIED`, in that order. The reply is ``0``, a line of JSON (the finding lines
the launcher wrote), then the outputs' bytes in the buffers' order.
"""

from __future__ import annotations

import ctypes
import io
import json
import sys

__all__ = ["CARRIED", "KINDS", "Native", "serve"]

# "list": a tensor list's block (its pointer slots name its members' buffers by index)
# (filled: an output the runtime fills first, with its element's bytes repeated)
KINDS = {"input": 0, "output": 1, "workspace": 2, "tiling": 3, "absent": 4, "list": 5, "filled": 6}
RETURNED = ("output", "filled")  # the kinds whose bytes the launch returns
CARRIED = ("input", "tiling", "list")  # the kinds whose bytes travel with the request


class Native:
    """A loaded kernel library."""

    def __init__(self, path: str):
        self._lib = ctypes.CDLL(str(path))
        self._launch = self._lib.opsdk_kernel_launch
        self._launch.restype = ctypes.c_int

    def launch(self, request: dict, payload: bytearray) -> tuple[list[str], bytearray]:
        """Launch on the carried buffers' bytes ``payload``: the finding lines and the
        outputs' bytes, one after the other."""
        buffers = request["buffers"]
        count = len(buffers)
        outputs = bytearray(sum(b["size"] for b in buffers if b["kind"] in RETURNED))
        # the launcher reads inputs from, and writes outputs to, these bytes in place
        addresses = {"output": _address(outputs), "carried": _address(payload)}
        at: dict[str, int] = {}
        pointers: list[int | None] = []
        for b in buffers:
            side = "carried" if b["kind"] in CARRIED else b["kind"]
            if b["kind"] == "filled":  # its first bytes, which the launcher copies in
                side, start, fill = "output", at.get("output", 0), bytes.fromhex(b["fill"])
                repeated = fill * (b["size"] // len(fill) + 1)
                outputs[start : start + b["size"]] = repeated[: b["size"]]
            if side in addresses:
                pointers.append(addresses[side] + at.get(side, 0))
                at[side] = at.get(side, 0) + b["size"]
            else:
                pointers.append(None)  # workspace, an absent input: nothing to carry
        args = (ctypes.c_void_p * count)(*pointers)
        sizes = (ctypes.c_uint64 * count)(*(b["size"] for b in buffers))
        kinds = (ctypes.c_int * count)(*(KINDS[b["kind"]] for b in buffers))
        names = "\t".join(b["name"] for b in buffers).encode()
        text = self._call(args, sizes, kinds, count, names, request)
        return text.splitlines(), outputs

    def _call(self, args, sizes, kinds, count, names, request) -> str:
        capacity, needed = 1 << 14, ctypes.c_size_t(0)
        first = True
        while True:
            report = ctypes.create_string_buffer(capacity)
            status = self._launch(
                args if first else None,
                sizes,
                kinds,
                ctypes.c_int(count),
                names,
                ctypes.c_uint32(request["block_dim"]),
                ctypes.c_uint64(request["tiling_key"]),
                ctypes.c_uint64(request["ub_size"]),
                report,
                ctypes.c_size_t(capacity),
                ctypes.byref(needed),
            )
            if status != 2:
                return report.value.decode(errors="replace")
            capacity, first = needed.value, False  # the launch is done: only its report again


def _address(data: bytearray) -> int:
    """Where ``data``'s bytes are (it stays alive and unresized while they are used)."""
    return ctypes.addressof((ctypes.c_char * len(data)).from_buffer(data)) if data else 0


def serve(path: str) -> None:
    """Answer launch requests from stdin until it closes."""
    native = Native(path)
    given, out = sys.stdin.buffer, sys.stdout.buffer
    if not isinstance(given, io.BufferedReader):  # a pipe's, as the launcher starts this
        raise OSError("the kernel worker reads a buffered stdin")
    for line in given:
        request = json.loads(line.decode().partition("\t")[2])
        payload = bytearray(sum(b["size"] for b in request["buffers"] if b["kind"] in CARRIED))
        view, done = memoryview(payload), 0
        while done < len(payload):
            read = given.readinto(view[done:])
            if not read:
                return  # the parent went away mid-request
            done += read
        findings, outputs = native.launch(request, payload)
        head = b"0\n" + json.dumps(findings).encode() + b"\n"
        out.write(b"%d\n" % (len(head) + len(outputs)))
        out.write(head)
        out.write(outputs)
        out.flush()


if __name__ == "__main__":
    serve(sys.argv[1])
