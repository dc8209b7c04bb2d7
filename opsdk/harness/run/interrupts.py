"""Ctrl-C and SIGTERM during `opsdk check`: finish the current cell, then stop.

The first signal asks the run to stop after the cell it is in; the matrix marks the
cells it did not reach ``not run``, and the reports asked for are still written. A
second aborts that cell at once (a KeyboardInterrupt the run loop ends on); a third
ends the process as the signal would. Under ``--isolate`` the op's process runs in its
own session, so a terminal's Ctrl-C reaches it only as forwarded from here: once per
signal, the same ladder.

While an :class:`Interrupts` is active nothing else takes SIGINT and SIGTERM over
(:func:`opsdk._runtime.signals.handlers_kept`: TorchAir's handler, run mid-compile,
crashes the process).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Protocol

from opsdk._runtime.signals import KEPT, handlers_kept, install, take_held

__all__ = ["EXIT_CODE", "Interrupts", "forwarded_to", "requested"]

EXIT_CODE = 130  # the shell's code for a run ended by Ctrl-C (128 + SIGINT)
_active: Interrupts | None = None


# What ``signal.signal`` takes and returns: a handler, SIG_DFL/SIG_IGN, or None.
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Interrupts:
    """While active (a context manager, in the main thread), SIGINT and SIGTERM climb the
    ladder above instead of raising where they land."""

    def __init__(self, command: str = "opsdk check", quiet: bool = False):
        self.command = command
        # Where the ladder's notices go: stderr, or the progress printer's ``notice`` once
        # progress lines are being printed (a notice must not land inside an open line);
        # nowhere for a watcher, whose child says them (``quiet``).
        self.say: Callable[[str], None] = (lambda text: None) if quiet else _say
        self.signals: list[int] = []
        self._children: list[Signalled] = []
        self._previous: dict[int, _Handler] = {}
        self._outer: Interrupts | None = None
        self._keeping = handlers_kept()
        # How a second signal aborts the cell running: a KeyboardInterrupt where it lands,
        # or, in a watched process, the process's end (:mod:`opsdk.harness.run.journal`).
        self.abort: Callable[[], None] = _interrupt

    @property
    def requested(self) -> bool:
        return bool(self.signals)

    def __enter__(self) -> Interrupts:
        global _active
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: install(s, self._handle) for s in KEPT}
            self.signals += take_held()  # those the command received while it started
        self._keeping.__enter__()
        self._outer, _active = _active, self
        return self

    def __exit__(self, *exc) -> None:
        global _active
        _active = self._outer
        self._keeping.__exit__(*exc)
        for signum, handler in self._previous.items():
            install(signum, handler)

    def _handle(self, signum: int, frame) -> None:
        self.signals.append(signum)
        name = signal.Signals(signum).name
        for child in self._children:
            _send(child, signum)
        if len(self.signals) == 1:
            self.say(f"{self.command}: {name}: stopping after this cell; a second {name} aborts it")
        elif len(self.signals) == 2:
            self.say(f"{self.command}: {name}: aborting the current cell")
            if not self._children:  # a child aborts its cell and exits: wait for its report
                self.abort()
        else:
            for child in self._children:
                _send(child, signal.SIGKILL)
            install(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)


def requested() -> bool:
    """Whether the active :class:`Interrupts` (if any) was signalled."""
    return _active is not None and _active.requested


class Signalled(Protocol):
    """What signals are forwarded to: a ``subprocess.Popen``, or a watcher's wrapper."""

    def send_signal(self, signum: int) -> None: ...


@contextlib.contextmanager
def forwarded_to(child: Signalled) -> Iterator[None]:
    """While active, the signals the active :class:`Interrupts` receives go to ``child`` too
    (those it already received as well: the child must not run past the parent's stop)."""
    active = _active
    if active is None:
        yield
        return
    active._children.append(child)
    for signum in active.signals:
        _send(child, signum)
    try:
        yield
    finally:
        active._children.remove(child)


def _send(child: Signalled, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)


def _interrupt() -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    """One line on stderr, on its own line, written unbuffered: a signal handler may run
    while a buffered stream is mid-write, and re-entering it raises."""
    os.write(2, f"\n{text}\n".encode())
