"""What a cell's checks tell its reader beside the verdict (``Result.notes``).

A passing cell says more than "pass" where the reader could not know what it covered:
the compiled columns list the host argument values each call took
(:func:`opsdk.harness.core.host_values.taken`). A check adds a note (:func:`add`) while
the cell runs; the runner collects them (:func:`collecting`) into the cell's result,
which the JSON, HTML and Markdown reports show.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["add", "collecting"]

_open: list[list[str]] = []  # the notes of the cells running, innermost last


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    """The notes added while active, in order, each once."""
    found: list[str] = []
    _open.append(found)
    try:
        yield found
    finally:
        _open.remove(found)


def add(note: str) -> None:
    """Note ``note`` on the cell running (nothing when no cell collects)."""
    if _open and note not in _open[-1]:
        _open[-1].append(note)
