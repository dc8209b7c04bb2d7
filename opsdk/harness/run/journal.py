"""The run journal: what a watched `opsdk check`/`audit` process has done, on disk as it goes,
so that a process that dies costs one cell, not the run.

A watcher (:mod:`opsdk.harness.run.watch`: the `opsdk` command around a plain run, or an
``--isolate`` parent around an op's process) gives its child a folder in
``OPSDK_JOURNAL``. The child appends one JSON line per event to ``journal.jsonl``: the run
began (its cells laid out), a cell started, a cell's result, the reports were written. When
the child dies (a signal, a ``MemoryError``, a hang the watcher ended), the watcher appends
how, naming the cell that was running, and starts the same command again: that process
takes the results already there, reports the dead cell as an error in layer ``process``
with how it died and where (Python's :mod:`faulthandler` writes the stack of a crash or a
hang to ``stack.txt``), and runs the cells left. An op whose process died
:data:`DEATHS_PER_OP` times gets its remaining cells as errors without another try.

The watcher reads the file with the standard library only (it imports no torch); this
module's :class:`Journal` is the child's side.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import re
import signal
import sys
import sysconfig
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

__all__ = [
    "ABORTED",
    "DEATHS_PER_OP",
    "ENV",
    "ENV_STOP",
    "EXIT_ABORTED",
    "EXIT_MEMORY",
    "HANG_SIGNAL",
    "Follower",
    "Journal",
    "Record",
    "active",
    "innermost",
    "read",
    "settled",
]

ENV = "OPSDK_JOURNAL"
ENV_STOP = "OPSDK_JOURNAL_STOP"  # set: the child runs no cell, it reports what is journaled
EXIT_MEMORY = 75  # the child ran out of memory: the watcher starts a fresh one
EXIT_ABORTED = 76  # a second signal aborted the child's cell: the watcher has it report
HANG_SIGNAL = signal.SIGUSR1  # the watcher asks a hung child for its stack with this
DEATHS_PER_OP = 3
ABORTED = "aborted by an interrupt"
_FILE = "journal.jsonl"
_STACK = "stack.txt"
# Where frames are not the user's: Python's own, installed packages (torch), opsdk.
_LIBRARIES = tuple(
    os.path.join(path, "")
    for path in {sysconfig.get_path(n) for n in ("stdlib", "platstdlib", "purelib", "platlib")}
    | {str(Path(__file__).resolve().parents[2])}
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+),? in (?P<function>\S+)')


@dataclass
class Record:
    """What a journal holds: which process began running cells last, the results by cell
    id (in order), the cell that was running when the process ended (None between
    cells), the deaths the watcher recorded, and whether the reports were written."""

    began_by: int | None = None  # the pid of the process that began running cells last
    results: dict[str, dict] = field(default_factory=dict)
    running: str | None = None
    running_op: str | None = None
    started_at: float | None = None
    deaths: list[dict] = field(default_factory=list)
    done: bool = False

    def deaths_of(self, op: str) -> int:
        return sum(1 for d in self.deaths if d.get("op") == op)


def read(folder: Path) -> Record:
    """The journal in ``folder`` (an empty record when there is none)."""
    return Follower(folder).poll()


class Follower:
    """A journal read as it grows: each :meth:`poll` applies the lines written since the
    last (a line not yet ended, being written or torn by a death, waits or is ignored)."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / _FILE
        self.record = Record()
        self._offset = 0

    def poll(self) -> Record:
        try:
            with open(self.path, "rb") as file:
                file.seek(self._offset)
                data = file.read()
        except OSError:
            return self.record
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.splitlines():
            try:
                _apply(self.record, json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
        return self.record


def _apply(record: Record, event: dict) -> None:
    kind = event.get("event")
    if kind == "began":
        record.began_by = int(event["pid"])
    elif kind == "start":
        record.running, record.running_op = event["cell"], event["op"]
        record.started_at = float(event["time"])
    elif kind == "result":
        record.results[event["cell"]] = event["result"]
        record.running = record.running_op = record.started_at = None
    elif kind == "died":
        record.deaths.append(event)
        record.running = record.running_op = record.started_at = None
    elif kind == "done":
        record.done = True


def append(folder: Path, event: dict) -> None:
    """One event, as one line written with one call (a reader never sees half of it)."""
    line = json.dumps(event) + "\n"
    fd = os.open(Path(folder) / _FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def stack(folder: Path) -> str:
    """What :mod:`faulthandler` wrote of the dead process's stack ('' when nothing)."""
    try:
        return (Path(folder) / _STACK).read_text(errors="replace")
    except OSError:
        return ""


def innermost(trace: str) -> str:
    """``kernels.py:12 in my_add_npu``: the innermost frame of a :mod:`faulthandler` stack
    that is the user's code (not Python's, torch's or opsdk's own), else the innermost;
    '' when the text holds no frame."""
    frames = [m for m in map(_FRAME.match, trace.splitlines()) if m]
    if not frames:
        return ""
    own = [m for m in frames if not m["file"].startswith(_LIBRARIES)]
    found = (own or frames)[0]  # faulthandler lists the most recent call first
    return f"{Path(found['file']).name}:{found['line']} in {found['function']}"


def _died(death: dict) -> str:
    """How a process died in a cell, for the cell's message."""
    at = f" at {death['where']}" if death.get("where") else ""
    more = "" if at else "; run it alone (-k, --column, --shapes) under gdb to see where"
    return f"the op's process {death['how']} in this cell{at}{more}"


def settled(record: Record, cells: list) -> tuple[dict, list]:
    """What a journal's ``record`` settles of ``cells``: the results it holds by cell id,
    a cell a process died in as an error in layer ``process`` (waiver applied), an op's
    cells after its :data:`DEATHS_PER_OP`-th death as errors, not run; then the cells
    still to run."""
    from opsdk.harness.cell import Result
    from opsdk.harness.run import waivers

    deaths = {d["cell"]: d for d in record.deaths}
    last = {d["op"]: d for d in record.deaths}
    done, left = {}, []
    for cell in cells:
        if cell.id in record.results:
            done[cell.id] = Result.from_json(record.results[cell.id])
        elif cell.id in deaths:
            message = _died(deaths[cell.id])
            done[cell.id] = waivers.apply(cell.result("error", "process", message), cell.waiver)
        elif cell.id == record.running:  # its process ended by a second signal (abort)
            done[cell.id] = cell.result("not run", None, ABORTED, waiver=cell.waiver)
        elif record.deaths_of(cell.op.name) >= DEATHS_PER_OP:
            message = (
                f"not run: the op's process died {DEATHS_PER_OP} times, last in "
                f"{last[cell.op.name]['cell']}; fix that cell first"
            )
            done[cell.id] = waivers.apply(cell.result("error", "process", message), cell.waiver)
        else:
            left.append(cell)
    return done, left


def active() -> Journal | None:
    """The journal this process writes, when a watcher gave it one."""
    folder = os.environ.get(ENV)
    return Journal(Path(folder)) if folder else None


class Journal:
    """The child's side: events appended as they happen, and the record left by the
    processes before it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.before = read(folder)
        self.stop = bool(os.environ.get(ENV_STOP))
        self._stack: TextIO | None = None

    def resumed(self, cells: list) -> tuple[dict, list]:
        """What the processes before this one left of ``cells`` (:func:`settled`)."""
        return settled(self.before, cells)

    def began(self) -> None:
        """The cells are laid out: from here on a death is a cell's (or the report's)."""
        self._watched_stack()
        append(self.folder, {"event": "began", "pid": os.getpid()})

    def start(self, cell) -> None:
        event = {"event": "start", "cell": cell.id, "op": cell.op.name, "time": time.time()}
        append(self.folder, event)

    def result(self, result) -> None:
        append(self.folder, {"event": "result", "cell": result.id, "result": result.to_json()})

    def out_of_memory(self, err: MemoryError) -> None:
        """End this process for a fresh one (:data:`EXIT_MEMORY`), its stack where the
        watcher reads a crash's: what it holds may never be freed."""
        frames = traceback.extract_tb(err.__traceback__)[::-1]  # innermost first, as faulthandler
        text = "".join(f'  File "{f.filename}", line {f.lineno} in {f.name}\n' for f in frames)
        with contextlib.suppress(OSError, ValueError, MemoryError):
            (self.folder / _STACK).write_text(f"MemoryError (most recent call first):\n{text}")
        with contextlib.suppress(OSError, ValueError, MemoryError):
            sys.stdout.flush()
        os._exit(EXIT_MEMORY)

    def abort(self) -> None:
        """A second signal's abort of the cell running, in a watched process: the process
        ends (:data:`EXIT_ABORTED`) and the watcher starts one that writes the reports. A
        KeyboardInterrupt instead could land in an import and leave a module half made."""
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(EXIT_ABORTED)

    def done(self) -> None:
        """The reports are written: nothing is left to resume."""
        append(self.folder, {"event": "done"})

    def _watched_stack(self) -> None:
        """A crash's stack, and a hung process's when the watcher asks (``HANG_SIGNAL``),
        go to ``stack.txt``, where the next process reads where the cell died."""
        self._stack = stack = open(self.folder / _STACK, "w")  # noqa: SIM115 - for the process's life
        faulthandler.enable(stack)
        faulthandler.register(HANG_SIGNAL, stack, all_threads=False)
