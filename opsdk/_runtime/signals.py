"""SIGINT and SIGTERM kept by whoever holds them: libraries that take them over at import
are refused while :func:`handlers_kept` is active.

TorchAir (``torchair.core._backend``) and npugraph_ex install handlers when imported
(TorchAir's lazily, in the middle of a compile) that finalize GE, reset Dynamo and then
ignore the signal. Run by a Ctrl-C mid-compile, that reset crashes the process natively
(``Cannot clear callbacks while 1 are pending``, then SIGFPE or SIGSEGV), and afterwards
Ctrl-C no longer stops the process. Their ``atexit`` hooks still finalize.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["KEPT", "handlers_kept", "hold", "install", "take_held"]

KEPT = (signal.SIGINT, signal.SIGTERM)
install = signal.signal  # the real one, for the holder's own handlers
_kept = 0  # how many handlers_kept() are active
_held: list[int] = []


def hold() -> None:
    """From now on the signals of :data:`KEPT` are only counted, until their holder takes
    them (:func:`take_held`) and installs its own handlers: a command's first moments,
    its imports among them, are never cut by a KeyboardInterrupt (an import it cuts
    leaves a module half made, and what uses it next fails)."""
    for signum in KEPT:
        install(signum, _count)


def take_held() -> list[int]:
    """The signals counted since :func:`hold`, handed over once."""
    taken = list(_held)
    _held.clear()
    return taken


def _count(signum, frame) -> None:
    _held.append(signum)


@contextlib.contextmanager
def handlers_kept() -> Iterator[None]:
    """While active (entered from the main thread), ``signal.signal`` leaves the handlers of
    :data:`KEPT` as they are: a call to replace one is ignored and returns the handler in
    force. Their holder installs its own with :data:`install`."""
    global _kept
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _kept += 1
    signal.signal = _guarded
    try:
        yield
    finally:
        _kept -= 1
        if not _kept:
            signal.signal = install


def _guarded(signum, handler):
    if signum in KEPT:
        return signal.getsignal(signum)
    return install(signum, handler)
