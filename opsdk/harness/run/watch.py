"""A run's process, watched: a crash, a hang or an exhausted memory costs the cell it
happened in, and the run goes on in a new process.

The `opsdk` command runs a plain `opsdk check`/`audit` as a child of a small process that
imports no torch (:func:`command`); ``--isolate`` runs each op's child the same way
(:mod:`opsdk.harness.run.isolate`). The child writes its journal
(:mod:`opsdk.harness.run.journal`) as it goes. When the child dies, or a cell runs past
the cell time limit (the child's Python stack is asked for, then it is killed), the
watcher records how and where in the journal; :func:`command` then starts the same
command again, which reports that cell as an error in layer ``process`` and runs the
cells left. Signals go to the child as :mod:`opsdk.harness.run.interrupts` forwards them;
a child stopped by them before its reports were written is started once more to write
them (it runs no cell).

A child is started with the watcher's import path (:data:`_BOOT`), not ``python -m
opsdk``: a folder named ``opsdk`` in the current directory must not replace opsdk.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from opsdk.harness.run import interrupts, journal

__all__ = [
    "DEFAULT_CELL_TIMEOUT",
    "ENV_OFF",
    "Ended",
    "command",
    "opsdk_argv",
    "rerun",
    "run",
    "wanted",
]

DEFAULT_CELL_TIMEOUT = 600.0  # seconds a cell may run: a cold first compiled cell fits
ENV_OFF = "OPSDK_NO_WATCH"  # set: `opsdk check` runs in the command's own process
_ENV_PATH = "OPSDK_SYS_PATH"
_BOOT = (
    "import json, os, sys; sys.path[:] = json.loads(os.environ.pop('OPSDK_SYS_PATH')); "
    "from opsdk.console import main; sys.exit(main())"
)
_POLL = 0.2  # seconds between looks at the child and its journal
_STACK_WAIT = 1.0  # seconds a hung child has to write its stack before it is killed
_RESTARTS_WITHOUT_CELL = 1  # a death outside any cell (laying out, reporting): one more try


def opsdk_argv(args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of an `opsdk ARGS` child that imports what this process
    imports (this process's ``sys.path``, not the current directory's ``opsdk/``)."""
    return [sys.executable, "-c", _BOOT, *args], {_ENV_PATH: json.dumps(sys.path)}


@dataclass
class Ended:
    """How a watched child ended: its exit status, how it died when it did (None for an
    exit of its own), its journal, and whether it journaled anything (a result, or a
    death in a cell): a process started again after one that did not would die the
    same way."""

    returncode: int
    how: str | None
    record: journal.Record
    progressed: bool


def run(
    args: list[str],
    folder: Path,
    cell_timeout: float | None,
    deadline: float | None = None,
    total_timeout: float | None = None,
    env: dict[str, str] | None = None,
    **streams,
) -> Ended:
    """Run `opsdk ARGS` journaling into ``folder`` until it ends; a cell past
    ``cell_timeout`` seconds, or the run past ``deadline`` (a ``time.monotonic()``: the
    ``total_timeout`` seconds the runs of this command have, as its message says), ends
    it. A death is
    recorded in the journal with the cell it happened in and where (``streams``:
    Popen's ``stdout``/``stderr``). Signals reach the child as :class:`_Signalled` says."""
    argv, extra = opsdk_argv(args)
    environment = {**os.environ, **extra, **(env or {}), journal.ENV: str(folder)}
    follower = journal.Follower(folder)
    before = _events(follower.poll())
    with (
        subprocess.Popen(
            argv, env=environment, start_new_session=True, preexec_fn=_die_with_parent, **streams
        ) as child,
        interrupts.forwarded_to(_Signalled(child, folder, journal.ENV_STOP in environment)),
    ):
        how = None
        try:
            while True:
                try:
                    child.wait(timeout=_POLL)
                    break
                except subprocess.TimeoutExpired:
                    how = _overdue(follower.poll(), deadline, cell_timeout, total_timeout)
                    if how:
                        _stack_then_kill(child)  # waits for it: the next wait returns
        except BaseException:  # the watcher itself interrupted: no orphan
            child.kill()
            raise
    record = follower.poll()
    code = child.returncode
    how = how or _death(code)
    if how and record.running:
        where = journal.innermost(journal.stack(folder))
        event = {"cell": record.running, "op": record.running_op, "how": how, "where": where}
        journal.append(folder, {"event": "died", **event})
        record = follower.poll()
    return Ended(code, how, record, _events(record) > before)


class _Signalled:
    """The child as the interrupt ladder signals it (:func:`interrupts.forwarded_to`). A
    child that has not begun its cells is ended (the watcher starts one that reports:
    a KeyboardInterrupt in its start would cut an import, or Python's own start); a child
    that only reports (``reporting``) is left to finish but for SIGKILL."""

    def __init__(self, child: subprocess.Popen, folder: Path, reporting: bool):
        self.child, self.folder, self.reporting = child, folder, reporting

    def send_signal(self, signum: int) -> None:
        if signum == signal.SIGKILL:
            self.child.kill()
        elif self.reporting:
            return
        elif journal.read(self.folder).began_by != self.child.pid:
            self.child.kill()
        else:
            self.child.send_signal(signum)


def _events(record: journal.Record) -> int:
    return len(record.results) + len(record.deaths)


def _overdue(record: journal.Record, deadline: float | None, cell: float | None, total):
    """Why the child must be ended now, or None."""
    if deadline is not None and time.monotonic() > deadline:
        return f"ran past the op's time limit of {total:g} s"
    if cell is not None and record.started_at is not None:
        if time.time() - record.started_at > cell:
            return f"ran past the cell time limit of {cell:g} s (--cell-timeout)"
    return None


def _death(code: int) -> str | None:
    """How the child died, when it did not end on its own."""
    if code == journal.EXIT_MEMORY:
        return "ran out of memory (MemoryError)"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return None


def _stack_then_kill(child: subprocess.Popen) -> None:
    """Ask a hung child for its Python stack (``journal.HANG_SIGNAL``), then kill it."""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(journal.HANG_SIGNAL)
        time.sleep(_STACK_WAIT)
        child.kill()
    child.wait()


def _die_with_parent() -> None:
    """In the child, before exec: die when the watcher dies (Linux), so a killed `opsdk`
    leaves no run behind it."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def rerun(
    args: list[str],
    folder: Path,
    cell_timeout: float | None,
    total_timeout: float | None = None,
    **streams,
) -> Ended:
    """`opsdk ARGS` (:func:`run`) started again after each death that cost a cell, until a
    child writes its reports or the time is up; a child stopped by a signal before its
    reports is started once more to write them (running no cell). The last child's end."""
    deadline = None if total_timeout is None else time.monotonic() + total_timeout
    fruitless = 0
    while True:
        stopped = interrupts.requested()
        stop = {journal.ENV_STOP: "1"} if stopped else {}
        ended = run(args, folder, cell_timeout, deadline, total_timeout, stop, **streams)
        spent = deadline is not None and time.monotonic() >= deadline
        if ended.record.done:
            return ended
        if interrupts.requested() and not stopped:
            continue  # stopped before its reports: once more, to write them
        if ended.how is None or spent:
            return ended
        fruitless = 0 if ended.progressed else fruitless + 1
        if stopped or ended.record.began_by is None or fruitless > _RESTARTS_WITHOUT_CELL:
            return ended


def wanted(args) -> bool:
    """Whether `opsdk` runs this command watched: a plain check or audit (``--isolate``
    watches each op itself), not inside a watched run, not turned off."""
    return (
        args.command in ("check", "audit")
        and not args.isolate
        and not args.only_op
        and journal.ENV not in os.environ
        and os.environ.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")
    )


def command(args: list[str], cell_timeout: float | None) -> int:
    """`opsdk ARGS` in a watched child (:func:`rerun`); the exit status is the last
    child's, 1 when none wrote its reports (130 after a signal)."""
    with (
        tempfile.TemporaryDirectory(prefix="opsdk-run-") as scratch,
        interrupts.Interrupts(f"opsdk {args[0]}", quiet=True),
    ):
        try:
            ended = rerun(args, Path(scratch), cell_timeout)
        except KeyboardInterrupt:  # a second signal between two children
            return interrupts.EXIT_CODE
        if ended.record.done and ended.returncode < 0:  # a signal once its reports were out
            return interrupts.EXIT_CODE
        if ended.record.done or ended.how is None:
            return ended.returncode
        print(f"opsdk {args[0]}: the run's process {ended.how}; no report", file=sys.stderr)
        return interrupts.EXIT_CODE if interrupts.requested() else 1
