"""The native side of a call: a compiled inference library loaded with ctypes and asked
one request, in this process or in a worker process serving a parent's requests (run as
a script), so that a crash of the C++ (a null deref on an absent optional input) ends the
worker, never the parent. Standard library only: the worker imports neither opsdk nor
torch, and starts in a few tens of milliseconds.

Worker protocol (stdin/stdout, bytes): a request is one line ``op_type<TAB>request``
(an empty op type asks for the op list); a reply is ``<length>\\n`` then ``status\\ntext``.
Before each function the library writes ``phase <InferShape|InferDataType>\\n`` to the
worker's stderr, so the parent can name the function a crash happened in.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["Native", "serve"]


class Native:
    """A loaded library: its op types and the raw reply to a request."""

    def __init__(self, path: str, phase_fd: int = -1, entry: str = "opsdk_infer"):
        """``phase_fd``: where the library announces each function it enters (-1: nowhere);
        ``entry``: the C function answering requests (the tiling library's: opsdk_tiling)."""
        self._lib = ctypes.CDLL(str(path))
        self._lib.opsdk_ops.restype = ctypes.c_char_p
        self._entry = getattr(self._lib, entry)
        self._entry.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ]
        ctypes.c_int.in_dll(self._lib, "opsdk_phase_fd").value = phase_fd

    def ops(self) -> str:
        return self._lib.opsdk_ops().decode()

    def infer(self, op_type: str, request: str) -> tuple[int, str]:
        """The entry's status (0 ok, 1 op not registered, 3 C++ exception) and reply text."""
        capacity, needed = 1 << 14, ctypes.c_size_t(0)
        while True:
            reply = ctypes.create_string_buffer(capacity)
            status = self._entry(
                op_type.encode(), request.encode(), reply, capacity, ctypes.byref(needed)
            )
            if status != 2:
                return status, reply.value.decode(errors="replace")
            capacity = needed.value


def serve(path: str, entry: str) -> None:
    """Answer requests from stdin until it closes (the parent is done or gone). The
    replies go out on a copy of stdout; what the library itself prints (a TilingFunc's
    printf or cout: group_norm_swish_grad's) goes to stderr, never into a reply."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    native = Native(path, phase_fd=2, entry=entry)
    for line in sys.stdin.buffer:
        op_type, _, request = line.decode().rstrip("\n").partition("\t")
        status, text = (0, native.ops()) if not op_type else native.infer(op_type, request)
        data = f"{status}\n{text}".encode()
        out.write(b"%d\n%s" % (len(data), data))
        out.flush()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
