"""The progress lines `opsdk check` prints while it runs: ``[ 7/45] ns::op [ge-dynamic] ... pass``.

The cell is written and its status after, on the same line; a cell's line is held
until it ends or runs :data:`LONG` seconds, so that an op's skips in a row are one line
(``[ 8-11/40] ns::op ... 4 skip``) and a cell that hangs is still the last thing in the
log (a crash before its line is written is named by the watcher's notice:
:mod:`opsdk.harness.run.watch`). The same plain lines serve a terminal and a CI log; a
reader that stops reading (``| head``) costs them, never the run (:mod:`opsdk._streams`).
``quiet`` (``-q``) writes one line per op: its name as its first cell starts, its cells'
counts once the next op starts.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from typing import TextIO

from opsdk import _streams
from opsdk.harness.cell import Result

__all__ = ["LONG", "Progress"]

LONG = 0.25  # seconds a cell runs before its line is written without its outcome (a skip: ~0)


class Progress:
    """Counts cells as they finish; under --isolate one line covers an op's cells."""

    def __init__(
        self, total: int, stream: TextIO | None = None, done: int = 0, quiet: bool = False
    ):
        self.total = total
        self._done = done  # cells a process before this one finished (journal)
        self.stream = stream or sys.stdout
        self._width = len(str(total))
        self._open = ""  # the line of the cell running, until its outcome ends it
        self._quiet = quiet
        self._op: str | None = None  # the op of the cell started last
        self._counts: Counter = Counter()  # quiet: the statuses of the op's cells so far
        self._skips: list[tuple[int, str]] = []  # (position, line) of the op's skips unsaid
        self._held = ""  # the line of the cell running, until it runs LONG or ends
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()  # the timer's thread writes too

    def start(self, label: str, op: str | None = None) -> None:
        """Announce the next cell (or an op's block of cells, see ``finish``); ``op``, the
        cell's op, holds its line until it ran :data:`LONG` seconds or ended, so that the
        op's skips fold and ``quiet`` says the op once (see the module)."""
        line = f"[{self._done + 1:>{self._width}}/{self.total}] {label} ... "
        if op != self._op or op is None:
            self.close()
            self._op = op
            if self._quiet and op is not None:
                self._write_open(f"[{self._done + 1:>{self._width}}/{self.total}] {op} ... ")
        if op is None:
            self._write_open(line)
        elif not self._quiet:
            self._held = line
            self._timer = threading.Timer(LONG, self._ran_long)
            self._timer.daemon = True
            self._timer.start()

    def _write_open(self, line: str) -> None:
        self._open = line
        self.stream.write(line)
        self.stream.flush()

    def _ran_long(self) -> None:
        """The held cell's line, once it ran long: the skips before it first."""
        with self._lock:
            if self._held:
                self._say_skips()
                self._write_open(self._held)
                self._held = ""

    def _say_skips(self) -> None:
        """The op's skips not said yet: a lone one as any cell, more as one line."""
        if len(self._skips) == 1:
            self.stream.write(self._skips[0][1])
        elif self._skips:
            first, last = self._skips[0][0], self._skips[-1][0]
            where = f"{first:>{self._width}}-{last}/{self.total}"
            self.stream.write(f"[{where}] {self._op} ... {len(self._skips)} skip\n")
        self.stream.flush()
        self._skips = []

    def close(self) -> None:
        """End what is pending: the op's skips, a quiet op's line with its counts."""
        with self._lock:
            self._say_skips()
            if self._counts:
                self._end(", ".join(f"{n} {status}" for status, n in self._counts.items()))
                self._counts = Counter()

    def notice(self, text: str) -> None:
        """``text`` on a line of its own amid the progress lines (a Ctrl-C's notice): an open
        line is ended first and started again after it, so the cell's outcome still follows
        its label and a log that stops there still names the cell. Written
        straight to the stream's file when it has one: a signal handler calls this, and
        re-entering a buffered stream the signal interrupted raises."""
        text = f"\n{text}\n{self._open}" if self._open else f"{text}\n"
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: no file
            self.stream.write(text)
            self.stream.flush()
        else:
            try:
                os.write(fd, text.encode())
            except OSError:  # the reader is gone (`| head`): the run goes on without it
                _streams.drop(fd)

    def ended_elsewhere(self, outcome: str) -> None:
        """End the line a process before this one left open (it died in that cell, or a
        signal aborted it: :mod:`opsdk.harness.run.journal`) with the cell's outcome."""
        self.stream.write(f"{outcome}\n")
        self.stream.flush()

    def finish(self, results: list[Result]) -> None:
        """End the line started last: one cell's outcome, or a block's counts."""
        position = self._done + 1
        self._done += len(results)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._quiet and self._op is not None:
            self._counts.update(r.status for r in results)
            return
        if len(results) == 1:
            [r] = results
            where = f" in {r.layer}" if r.layer else ""
            text = f"{r.status}{where} ({'cached' if r.cached else f'{r.seconds:.2f} s'})"
        else:
            counts = Counter(r.status for r in results)
            text = ", ".join(f"{n} {status}" for status, n in counts.items())
        with self._lock:
            held, self._held = self._held, ""
            if held and results[0].status == "skip":
                self._skips.append((position, f"{held}{text}\n"))
                return
            if held:
                self._say_skips()
                self._write_open(held)
        self._end(text)

    def _end(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self._open = ""
