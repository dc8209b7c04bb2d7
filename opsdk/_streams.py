"""How a command's output reaches the user, whatever stdout and stderr are.

A reader that leaves early (``opsdk check P --json r.json | head -n 2``), a log on a
full disk, or a terminal whose encoding has no ``✓`` (``PYTHONIOENCODING=ascii``) must
cost output, never the run: its reports are still written and its exit code is its own.
Python ignores SIGPIPE, so a closed pipe is a ``BrokenPipeError`` on a write or a flush;
as Python's docs on SIGPIPE advise, the stream's file descriptor is then pointed at
/dev/null, so that nothing later (a progress line, the flush at exit) writes to it
again. Text the encoding cannot carry is written with backslash escapes.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = ["captured", "drop", "kept", "shows"]


@contextlib.contextmanager
def captured() -> Iterator[list[str]]:
    """What the process prints on stdout and stderr while active, taken at their file
    descriptors (a library's own log handlers and C code too, which bypass Python's
    streams): the lines fill the list yielded on exit, nothing reaches the user."""
    lines: list[str] = []
    _flush()
    with tempfile.TemporaryFile() as held:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(held.fileno(), 1)
            os.dup2(held.fileno(), 2)
            yield lines
        finally:
            _flush()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            held.seek(0)
            lines += [t for t in held.read().decode(errors="replace").splitlines() if t.strip()]


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()


def drop(fd: int) -> None:
    """Send what is still written to ``fd`` (a closed pipe's) to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


class _Forgiving:
    """``stream`` whose writes never raise: once the stream fails, output is dropped."""

    def __init__(self, stream: TextIO, name: str):
        self._stream = stream
        self._name = name
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                try:
                    self._stream.write(text)
                except UnicodeEncodeError:
                    encoding = self._stream.encoding
                    self._stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
            except OSError as err:
                self._lost(err)
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except OSError as err:
                self._lost(err)

    def __getattr__(self, name: str):  # fileno, isatty, encoding, buffer...
        return getattr(self._stream, name)

    def _lost(self, err: OSError) -> None:
        """The reader is gone (EPIPE, said by nobody: the reader chose to stop) or the
        stream broke (a full disk: said on stderr): nothing more is written to it."""
        self._gone = True
        try:
            drop(self._stream.fileno())
        except (AttributeError, OSError, ValueError):  # no file descriptor: nothing to point
            pass
        if err.errno != errno.EPIPE and self._name == "stdout":
            sys.stderr.write(f"opsdk: stdout: {err.strerror}: the rest of the output is dropped\n")


def kept(main: Callable[..., int]) -> Callable[..., int]:
    """``main`` with stdout and stderr that never raise (:class:`_Forgiving`), flushed before
    it returns; the streams it found are put back after it."""

    @functools.wraps(main)
    def run(*args, **kwargs) -> int:
        found = sys.stdout, sys.stderr
        sys.stdout = _Forgiving(sys.stdout or open(os.devnull, "w"), "stdout")  # noqa: SIM115
        sys.stderr = _Forgiving(sys.stderr or open(os.devnull, "w"), "stderr")  # noqa: SIM115
        try:
            return main(*args, **kwargs)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = found

    return run


def shows(text: str) -> bool:
    """Whether stdout's encoding can carry ``text`` (a mark such as ``✓``)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True
