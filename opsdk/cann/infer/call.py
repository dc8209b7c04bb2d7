"""Call an op's compiled InferShape / InferDataType from Python (ctypes, in a worker
process by default: a crash of the C++ is then a finding about the op, not opsdk's end).

A call states the node as GE would hand it to the functions: per IR input its given
instances (dtype, shape with -1 for an unknown dim and ``(-2,)`` for an unknown rank,
and a value-depend input's host data), the attrs in IR order (None: unset), and how
many outputs the node has. The answer is each output's shape and dtype and the log
lines (errors, warnings) the functions wrote.
"""

from __future__ import annotations

import io
import os
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from opsdk.cann.infer import _native
from opsdk.cann.infer.chip import soc_version

__all__ = ["FORMATS", "Crashed", "Given", "Inferred", "Library", "Unlinked", "logged"]

# How the loader says a library needs a symbol no file built into it defines.
_UNDEFINED = re.compile(r"undefined symbol: ([\w$.@]+)")
# Source files searched for the definition of a symbol the library lacks, at most.
_SEARCHED = 5000


# GE's ge::Format enumerators in their numbering (graph/types.h's order: FORMAT_NCHW is 0,
# FORMAT_NCDHW 30), without the FORMAT_ prefix: the stand-in headers are generated from it.
FORMATS = (
    "NCHW", "NHWC", "ND", "NC1HWC0", "FRACTAL_Z", "NC1C0HWPAD", "NHWC1C0", "FSR_NCHW",
    "FRACTAL_DECONV", "C1HWNC0", "FRACTAL_DECONV_TRANSPOSE", "FRACTAL_DECONV_SP_STRIDE_TRANS",
    "NC1HWC0_C04", "FRACTAL_Z_C04", "CHWN", "FRACTAL_DECONV_SP_STRIDE8_TRANS", "HWCN",
    "NC1KHKWHWC0", "BN_WEIGHT", "FILTER_HWCK", "HASHTABLE_LOOKUP_LOOKUPS",
    "HASHTABLE_LOOKUP_KEYS", "HASHTABLE_LOOKUP_VALUE", "HASHTABLE_LOOKUP_OUTPUT",
    "HASHTABLE_LOOKUP_HITS", "C1HWNCoC0", "MD", "NDHWC", "FRACTAL_ZZ", "FRACTAL_NZ", "NCDHW",
    "DHWCN", "NDC1HWC0", "FRACTAL_Z_3D", "CN", "NC", "DHWNC", "FRACTAL_Z_3D_TRANSPOSE",
    "FRACTAL_ZN_LSTM", "FRACTAL_Z_G", "RESERVED",
)  # fmt: skip


@dataclass(frozen=True)
class Given:
    """One input instance: GE dtype number, shape, (value-depend inputs) host data as raw
    bytes in that dtype, and its format (a :data:`FORMATS` name: what ``GetOriginFormat``
    answers; the node's outputs take the first input's)."""

    dtype: int
    shape: tuple[int, ...]
    data: bytes | None = None
    format: str = "ND"
    depend: bool = False  # a value-depend input: without data its tensor is withheld (unknown)


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


class Crashed(Exception):
    """The C++ ended its process (a signal, e.g. 11: SIGSEGV) or hung, in ``function``
    (``InferShape``, ``InferDataType``; None: before either); ``said``: what the process
    wrote to stderr (a sanitizer's report)."""

    def __init__(self, how: str, function: str | None, said: tuple[str, ...] = ()):
        self.how, self.function, self.said = how, function, said
        super().__init__(f"the {function or 'library'} {how}")


class Unlinked(Crashed):
    """The library does not load: a function its sources call is defined in another
    file of the project, which was not built with them (``defined_in``: that file, when
    the project holds one definition of it)."""

    def __init__(self, symbol: str, defined_in: Path | None = None):
        self.symbol, self.defined_in = symbol, defined_in
        where = f", defined in {defined_in}" if defined_in else ""
        Exception.__init__(self, f"link: {symbol}{where}")


def unlinked(message: str, root: Path | None) -> Unlinked | None:
    """The :class:`Unlinked` a loader's ``message`` says (None if it says no undefined
    symbol), its symbol demangled and looked for under ``root`` and the two folders
    above it (a project's shared helpers sit beside its ops' folders)."""
    found = _UNDEFINED.search(message)
    if found is None:
        return None
    symbol = _demangled(found.group(1))
    name = symbol.partition("(")[0].rpartition("::")[2]
    definitions = _defining(name, Path(root)) if root is not None and name else []
    return Unlinked(symbol, definitions[0] if len(definitions) == 1 else None)


def _demangled(symbol: str) -> str:
    try:
        done = subprocess.run(["c++filt", symbol], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return symbol
    return done.stdout.strip() or symbol


def _defining(name: str, root: Path) -> list[Path]:
    """The C++ sources under ``root`` (or a folder above) that define function ``name``."""
    # a return type, the name (maybe qualified), the parameters, the body: not a call. The
    # type's words and the spaces or ``*&`` between them are disjoint classes: a line of
    # ``*`` (a comment's frame) would otherwise backtrack for hours.
    body = re.compile(
        rf"^[ \t]*(?:[\w:<>]+[ \t*&]+){{1,6}}(?:\w+::)*{re.escape(name)}\s*\([^;{{}}]*\)\s*"
        r"(?:const\s*)?\{",
        re.MULTILINE,
    )
    for top in (root, root.parent, root.parent.parent):
        files = [p for ext in ("cpp", "cc", "cxx") for p in top.rglob(f"*.{ext}")][:_SEARCHED]
        texts = ((p, p.read_text(errors="replace")) for p in files)
        found = [p for p, text in texts if name in text and body.search(text)]
        if found:
            return found
    return []


class Library:
    """A compiled inference library. ``isolate`` (the default): it runs in a worker process
    of its own, started on the first call and again after a crash, so a C++ crash is a
    :class:`Crashed` for that call, not the end of this process; else it is loaded here."""

    ENTRY = "opsdk_infer"  # the C function answering its requests

    @property
    def ENVIRON(self) -> dict[str, str]:  # noqa: N802 (a constant of the class's kind)
        """Set in its worker's environment."""
        return {}

    def __init__(self, path: Path, root: Path | None = None, *, isolate: bool = True):
        """``root``: the project folder it was built for (its log lines name files below it)."""
        self.path = Path(path)
        self.root = root
        self._native = None
        if not isolate:
            try:
                self._native = _native.Native(str(path), entry=self.ENTRY)
            except OSError as err:
                raise unlinked(str(err), root) or err from None
        self._worker: _Worker | None = None

    def ops(self) -> list[str]:
        return self._ask("", "")[1].split()

    def infer(
        self,
        op_type: str,
        inputs: list[list[Given]],
        attrs: list,
        outputs: int | tuple[int, ...],
        node: str = "node",
        chip: str = "ascend910b",
    ) -> Inferred:
        """Run the op's functions on a node with ``inputs`` (per IR input, its instances:
        [] for an absent optional one), ``attrs`` and ``outputs`` outputs (or per IR
        output its instance count: a dynamic output's instances), as ``chip``
        (an ``AddConfig`` name: what CANN's platform API reports to the functions)."""
        request = _request(op_type, node, soc_version(chip), inputs, attrs, outputs)
        status, text = self._ask(op_type, request)
        if status == 1:
            raise KeyError(f"{self.path} registers no inference for {op_type}")
        return _reply(text, self.root)

    def close(self) -> None:
        """End the worker, if one runs (it also ends by itself when this process does)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _ask(self, op_type: str, request: str) -> tuple[int, str]:
        if self._native is not None:
            return (0, self._native.ops()) if not op_type else self._native.infer(op_type, request)
        if self._worker is None:
            self._worker = _Worker(self.path, self.ENTRY, self.ENVIRON)
        try:
            return self._worker.ask(op_type, request)
        except Crashed as crash:
            self._worker = None  # the next call starts a fresh one
            raise unlinked(str(crash), self.root) or crash from None


class _Worker:
    """A process serving one library's requests (``script``'s: :func:`_native.serve`, or
    another native side speaking the same protocol)."""

    TIMEOUT = 60.0  # seconds a call may take before it counts as hung

    def __init__(
        self,
        path: Path,
        entry: str = "",
        environ: dict[str, str] | None = None,
        script: str = _native.__file__,
    ):
        self._phases = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", script, str(path), *([entry] if entry else [])],
            env={**os.environ, **(environ or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._phases,
        )
        stdin, stdout = self._process.stdin, self._process.stdout
        if not isinstance(stdin, io.BufferedWriter) or not isinstance(stdout, io.BufferedReader):
            raise OSError("the inference worker's pipes did not open")  # PIPE gives both
        self._stdin, self._stdout = stdin, stdout

    def ask(self, op_type: str, request: str) -> tuple[int, str]:
        data = self.exchange(f"{op_type}\t{request}\n".encode())
        status, _, text = data.decode(errors="replace").partition("\n")
        return int(status), text

    def exchange(self, *message: bytes) -> bytes:
        """Send ``message``'s parts, one after the other; the reply's bytes (its status
        line first). Raises :class:`Crashed` when the worker ends or hangs."""
        try:
            for part in message:
                self._stdin.write(part)
            self._stdin.flush()
            size = int(self._read_line())
            return self._read(size)
        except TimeoutError:
            self._process.kill()
            raise self._ended(f"hung (killed after {self.TIMEOUT:.0f} s)") from None
        except (OSError, ValueError, EOFError):
            raise self._ended(None) from None

    def _read_line(self) -> bytes:
        line = b""
        while not line.endswith(b"\n"):
            line += self._read(1)
        return line

    def _read(self, size: int) -> bytes:
        out = self._stdout
        data = bytearray()
        while len(data) < size:
            if not select.select([out], [], [], self.TIMEOUT)[0]:
                raise TimeoutError
            chunk = out.read1(size - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return bytes(data)

    def _ended(self, how: str | None) -> Crashed:
        """What ended the call (``how``, else the process's signal or exit status) and the
        function it was in."""
        code = self._process.wait()
        self._phases.seek(0)
        said = self._phases.read().decode(errors="replace").splitlines()
        phases = [line[6:] for line in said if line.startswith("phase ")]
        last = next((line for line in reversed(said) if not line.startswith("phase ")), "")
        self.close()
        if how is None:  # a load failure (an undefined symbol) is the worker's last line
            how = (
                f"crashed (signal {-code}: {signal.Signals(-code).name})"
                if code < 0
                else f"ended its process (exit {code}: {last.strip()})"
            )
        report = tuple(line for line in said if not line.startswith("phase "))
        return Crashed(how, phases[-1] if phases else None, report)

    def close(self) -> None:
        if self._process.poll() is None:
            self._stdin.close()
            self._process.wait()
        self._stdout.close()
        self._phases.close()


def _request(op_type, node, soc, inputs, attrs, outputs) -> str:
    words = [op_type, node, soc, str(len(inputs))]
    for instances in inputs:
        words.append(str(len(instances)))
        for given in instances:
            shape = list(given.shape)
            words += [str(given.dtype), str(FORMATS.index(given.format))]
            words.append("-2" if shape == [-2] else str(len(shape)))
            words += [] if shape == [-2] else [str(d) for d in shape]
            words.append(
                ("?" if given.depend else "-") if given.data is None else given.data.hex() or "="
            )
    words.append(str(len(attrs)))
    words += [_attr(a) for a in attrs]
    # a count (an instance each) or per IR output its instances, as "2,2,1,"
    words.append(str(outputs) if isinstance(outputs, int) else "".join(f"{n}," for n in outputs))
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
        elif word in ("log", "error"):
            log.append(logged(word, rest, root))
    return Inferred(shape_status, tuple(shapes), dtype_status, tuple(dtypes), tuple(log), asked)


def logged(word: str, rest: str, root: Path | None) -> str:
    """A reply's ``log`` line (``level file:line name: message``, the file below ``root``)
    or ``error`` line as the answer's log keeps it."""
    if word == "error":
        return f"E {rest}"
    level, _, where = rest.partition(" ")
    if root is not None and not where.startswith("/"):
        where = f"{root}/{where}"
    return f"{level} {where}"


def _status(text: str) -> int:
    """GE's graphStatus (uint32): GRAPH_FAILED is 0xFFFFFFFF."""
    return int(text)
