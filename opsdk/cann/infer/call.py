"""Call an op's compiled InferShape / InferDataType from Python (ctypes).

A call states the node as GE would hand it to the functions: per IR input its given
instances (dtype, shape with -1 for an unknown dim and ``(-2,)`` for an unknown rank,
and a value-depend input's host data), the attrs in IR order (None: unset), and how
many outputs the node has. The answer is each output's shape and dtype and the log
lines (errors, warnings) the functions wrote.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Given", "Inferred", "Library"]


@dataclass(frozen=True)
class Given:
    """One input instance: GE dtype number, shape and (value-depend inputs) host data as
    raw bytes in that dtype."""

    dtype: int
    shape: tuple[int, ...]
    data: bytes | None = None


@dataclass(frozen=True)
class Inferred:
    """What the C++ answered. ``shape_status`` / ``dtype_status``: the functions' return
    (0: GRAPH_SUCCESS; None: the op registers no such function)."""

    shape_status: int | None
    shapes: tuple[tuple[int, ...], ...]
    dtype_status: int | None
    dtypes: tuple[int, ...]
    log: tuple[str, ...]
    outputs_asked: int  # 1 + the highest output index the functions asked for


class Library:
    """A compiled inference library, loaded once."""

    def __init__(self, path: Path, root: Path | None = None):
        """``root``: the project folder it was built for (its log lines name files below it)."""
        self.path = Path(path)
        self.root = root
        self._lib = ctypes.CDLL(str(path))
        self._lib.opsdk_ops.restype = ctypes.c_char_p
        self._lib.opsdk_infer.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_size_t),
        ]

    def ops(self) -> list[str]:
        return self._lib.opsdk_ops().decode().split()

    def infer(
        self,
        op_type: str,
        inputs: list[list[Given]],
        attrs: list,
        outputs: int,
        node: str = "node",
    ) -> Inferred:
        """Run the op's functions on a node with ``inputs`` (per IR input, its instances:
        [] for an absent optional one), ``attrs`` and ``outputs`` outputs."""
        request = _request(op_type, node, inputs, attrs, outputs).encode()
        capacity, needed = 1 << 14, ctypes.c_size_t(0)
        while True:
            reply = ctypes.create_string_buffer(capacity)
            status = self._lib.opsdk_infer(
                op_type.encode(), request, reply, capacity, ctypes.byref(needed)
            )
            if status != 2:
                break
            capacity = needed.value
        if status == 1:
            raise KeyError(f"{self.path} registers no inference for {op_type}")
        return _reply(reply.value.decode(errors="replace"), self.root)


def _request(op_type, node, inputs, attrs, outputs) -> str:
    words = [op_type, node, str(len(inputs))]
    for instances in inputs:
        words.append(str(len(instances)))
        for given in instances:
            shape = list(given.shape)
            words += [str(given.dtype), "-2" if shape == [-2] else str(len(shape))]
            words += [] if shape == [-2] else [str(d) for d in shape]
            words.append("-" if given.data is None else given.data.hex() or "=")
    words.append(str(len(attrs)))
    words += [_attr(a) for a in attrs]
    words.append(str(outputs))
    return " ".join(words)


def _attr(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"b {int(value)}"
    if isinstance(value, int):
        return f"i {value}"
    if isinstance(value, float):
        return f"f {_float(value)}"
    if isinstance(value, str):
        return f"s {value.encode().hex() or '-'}"
    values = list(value)
    if all(isinstance(v, bool) for v in values) and values:
        return f"lb {len(values)} " + " ".join(str(int(v)) for v in values)
    if all(isinstance(v, int) for v in values):
        return f"li {len(values)} " + " ".join(map(str, values))
    return f"lf {len(values)} " + " ".join(_float(v) for v in values)


def _float(value: float) -> str:
    """A float32 as text C++ reads back to the same value."""
    return repr(struct.unpack("f", struct.pack("f", value))[0])


def _reply(text: str, root: Path | None) -> Inferred:
    shape_status = dtype_status = None
    shapes, dtypes, log, asked = [], [], [], 0
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "shape":
            shape_status = None if rest == "none" else _status(rest)
        elif word == "out":
            rank, *dims = map(int, rest.split())
            shapes.append(tuple(dims[:rank]))
        elif word == "dtype":
            dtype_status = _status(rest)
        elif word == "dt":
            dtypes.append(int(rest))
        elif word == "asked":
            asked = int(rest)
        elif word == "log":
            level, _, where = rest.partition(" ")
            if root is not None and not where.startswith("/"):
                where = f"{root}/{where}"
            log.append(f"{level} {where}")
        elif word == "error":
            log.append(f"E {rest}")
    return Inferred(shape_status, tuple(shapes), dtype_status, tuple(dtypes), tuple(log), asked)


def _status(text: str) -> int:
    """GE's graphStatus (uint32): GRAPH_FAILED is 0xFFFFFFFF."""
    return int(text)
