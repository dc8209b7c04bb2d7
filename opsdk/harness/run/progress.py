"""The progress lines `opsdk check` prints while it runs: ``[ 7/45] ns::op [ge-dynamic] ... pass``.

The cell is written before it runs and its status after, on the same line, so
a cell that hangs or crashes the process is the last thing in the log. The
same plain lines serve a terminal and a CI log; a reader that stops reading
(``| head``) costs them, never the run (:mod:`opsdk._streams`).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import TextIO

from opsdk import _streams
from opsdk.harness.cell import Result


class Progress:
    """Counts cells as they finish; under --isolate one line covers an op's cells."""

    def __init__(self, total: int, stream: TextIO | None = None, done: int = 0):
        self.total = total
        self._done = done  # cells a process before this one finished (journal)
        self.stream = stream or sys.stdout
        self._width = len(str(total))
        self._open = ""  # the line of the cell running, until its outcome ends it

    def start(self, label: str) -> None:
        """Announce the next cell (or an op's block of cells, see ``finish``)."""
        position = f"{self._done + 1:>{self._width}}/{self.total}"
        self._open = f"[{position}] {label} ... "
        self.stream.write(self._open)
        self.stream.flush()

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
        self._done += len(results)
        if len(results) == 1:
            [r] = results
            where = f" in {r.layer}" if r.layer else ""
            text = f"{r.status}{where} ({'cached' if r.cached else f'{r.seconds:.2f} s'})"
        else:
            counts = Counter(r.status for r in results)
            text = ", ".join(f"{n} {status}" for status, n in counts.items())
        self.stream.write(text + "\n")
        self.stream.flush()
        self._open = ""
