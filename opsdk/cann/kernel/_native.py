"""The native side of a kernel launch: the compiled kernel library loaded with ctypes and
asked to launch, in a worker process serving a parent's requests (run as a script), so a
crash of the kernel ends the worker, never the parent. Standard library only.

Protocol: :class:`opsdk.cann.infer.call._Worker`'s. A request is one line
``launch<TAB><json>``: the buffers in the entry's parameter order (name, kind, size, hex
data for inputs and tiling), block_dim, tiling_key, ub_size; the reply's text is JSON:
the outputs' bytes (hex) by name and the finding lines the launcher wrote.
"""

from __future__ import annotations

import ctypes
import json
import sys

__all__ = ["KINDS", "Native", "serve"]

KINDS = {"input": 0, "output": 1, "workspace": 2, "tiling": 3, "absent": 4}


class Native:
    """A loaded kernel library."""

    def __init__(self, path: str):
        self._lib = ctypes.CDLL(str(path))
        self._launch = self._lib.opsdk_kernel_launch
        self._launch.restype = ctypes.c_int

    def launch(self, request: dict) -> dict:
        buffers = request["buffers"]
        count = len(buffers)
        memory = [
            ctypes.create_string_buffer(bytes.fromhex(b.get("data", "")), max(b["size"], 1))
            for b in buffers
        ]
        args = (ctypes.c_void_p * count)(*(ctypes.addressof(m) for m in memory))
        sizes = (ctypes.c_uint64 * count)(*(b["size"] for b in buffers))
        kinds = (ctypes.c_int * count)(*(KINDS[b["kind"]] for b in buffers))
        names = "\t".join(b["name"] for b in buffers).encode()
        text = self._call(args, sizes, kinds, count, names, request)
        outputs = {
            b["name"]: memory[i].raw[: b["size"]].hex()
            for i, b in enumerate(buffers)
            if b["kind"] == "output"
        }
        return {"outputs": outputs, "findings": text.splitlines()}

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


def serve(path: str) -> None:
    """Answer launch requests from stdin until it closes."""
    native = Native(path)
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        _, _, request = line.decode().rstrip("\n").partition("\t")
        data = ("0\n" + json.dumps(native.launch(json.loads(request)))).encode()
        out.write(b"%d\n%s" % (len(data), data))
        out.flush()


if __name__ == "__main__":
    serve(sys.argv[1])
