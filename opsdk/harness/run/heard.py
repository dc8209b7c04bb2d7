"""What third-party code says while a cell runs: its warnings and warning-level log records.

torch, AOTAutograd, TorchAir and npugraph_ex warn through :mod:`warnings` and log
through :mod:`logging` handlers that write straight to stdout or stderr (TorchAir's
``torchair`` and ``npugraph_ex`` loggers print to stdout); torch_npu's NPUGraph logs
(``NPUGraph: ERROR — capture failed``) through a logger with no handler at all, which
:mod:`logging` prints on stderr (``logging.lastResort``). Left alone, that text
lands in the middle of a progress line, detached from the cell that caused it.
While a cell runs it is recorded instead, deduplicated, and the reports show it
with that cell (``Result.warnings``). Log records below WARNING (TorchAir's debug
output under ``TORCH_COMPILE_DEBUG=1``) still print: the user asked for them.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator

from opsdk._runtime.warned import caught

__all__ = ["Heard"]

# Loggers whose console handlers print past the progress line (with their children).
_LOGGERS = ("torch", "torch_npu", "torchair", "npugraph_ex")


class _Recorder(logging.Filter):
    """A handler filter that keeps WARNING and above for the cell instead of printing it."""

    def __init__(self, heard: Heard):
        super().__init__()
        self._heard = heard

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        self._heard.add(_line(record))
        return False


class _LastResort(logging.Handler):
    """Takes the place of ``logging.lastResort``, which prints on stderr the records no
    handler took (WARNING and above): keeps them for the cell."""

    def __init__(self, heard: Heard):
        super().__init__(logging.WARNING)
        self._heard = heard

    def emit(self, record: logging.LogRecord) -> None:
        self._heard.add(_line(record))


def _line(record: logging.LogRecord) -> str:
    return f"{record.name} {record.levelname}: {record.getMessage()}"


class Heard:
    """One cell's warnings and log records, in the order first heard, each once."""

    def __init__(self):
        self._lines: dict[str, None] = {}

    def add(self, line: str) -> None:
        self._lines.setdefault(line.strip())

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self._lines)

    def _warned(self, message, category, filename, lineno, file=None, line=None) -> None:
        self.add(f"{category.__name__}: {message}")

    @contextlib.contextmanager
    def warnings(self) -> Iterator[None]:
        """Record the warnings raised while active. The filters in force still apply, and
        a filter code sets while active (at import, say) outlives it, as it would unrecorded."""
        with caught():  # puts showwarning back
            warnings.showwarning = self._warned
            yield

    @contextlib.contextmanager
    def logs(self) -> Iterator[None]:
        """Record the warning-level records of the console handlers of loggers that exist
        when entered (enter it after TorchAir is imported: a logger created early would
        lack TorchAir's logger class), and those no handler takes."""
        recorder = _Recorder(self)
        handlers = [
            handler
            for name, logger in list(logging.Logger.manager.loggerDict.items())
            if isinstance(logger, logging.Logger) and name.split(".")[0] in _LOGGERS
            for handler in logger.handlers
            if isinstance(handler, logging.StreamHandler)
            and not isinstance(handler, logging.FileHandler)
        ]
        for handler in handlers:
            handler.addFilter(recorder)
        last_resort, logging.lastResort = logging.lastResort, _LastResort(self)
        try:
            yield
        finally:
            logging.lastResort = last_resort
            for handler in handlers:
                handler.removeFilter(recorder)
