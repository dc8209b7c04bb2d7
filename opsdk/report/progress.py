"""The progress lines `opsdk check` prints while it runs: ``[ 7/45] ns::op [ge-dynamic] ... pass``.

The cell is written before it runs and its status after, on the same line, so
a cell that hangs or crashes the process is the last thing in the log. The
same plain lines serve a terminal and a CI log.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from typing import TextIO

from opsdk.harness.model import Result

_STARTED = re.compile(r"^\[ *\d+/\d+\] (?P<label>.+) \.\.\. $")


class Progress:
    """Counts cells as they finish; under --isolate one line covers an op's cells."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total = total
        self._done = 0
        self.stream = stream or sys.stdout
        self._width = len(str(total))

    def start(self, label: str) -> None:
        """Announce the next cell (or an op's block of cells, see ``finish``)."""
        position = f"{self._done + 1:>{self._width}}/{self.total}"
        self.stream.write(f"[{position}] {label} ... ")
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


def unfinished(log: str) -> str | None:
    """The label of the cell a progress log stops in, if the log ends mid-cell: where a
    process that crashed or was killed was."""
    lines = log.splitlines()
    found = _STARTED.match(lines[-1]) if lines and not log.endswith("\n") else None
    return found["label"] if found else None
