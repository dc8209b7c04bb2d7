"""`opsdk check --isolate`: each op in its own process, with a time limit.

A kernel that segfaults, aborts or hangs takes its process down; run in a child
per op, it costs only that op's cells, reported as errors with the signal or
the time (and the cell the child was running), and the other ops still run.
The child runs in its own session and gets Ctrl-C and SIGTERM as forwarded by
:mod:`opsdk.harness.run.interrupts`, so it stops as the parent does, report written.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opsdk.harness.cell import Cell, Result
from opsdk.harness.run import interrupts
from opsdk.harness.run.progress import unfinished


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode} without a report"


def _where(stdout: str) -> str:
    """`` in ns::op [ge-dynamic]`` when the child's progress log names the cell it died in."""
    label = unfinished(stdout)
    return f" in {label}" if label else ""


def run_op(
    target: str, cells: list[Cell], selection, timeout: float, dump_dir=None, command="check"
):
    """Check one op's ``cells`` in a child `opsdk check --only-op` (`opsdk audit` for
    ``command="audit"``) given the ``selection`` flags that lay them out (``--backend
    ...``); a crash or timeout becomes each cell's error, a stop before the child's report
    each cell's ``not run``."""
    op = cells[0].op.name

    def every_cell(status, layer=None, message="", seconds=0.0):
        return [c.result(status, layer, message, seconds=round(seconds, 4)) for c in cells]

    with tempfile.TemporaryDirectory(prefix="opsdk-isolate-") as scratch:
        report = Path(scratch) / "report.json"
        argv = [sys.executable, "-m", "opsdk", command, target, "--only-op", op, *selection]
        argv += ["--json", str(report)]
        if dump_dir is not None:
            argv += ["--dump", str(dump_dir)]
        start = time.perf_counter()
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        with (
            subprocess.Popen(argv, start_new_session=True, **pipes) as child,
            interrupts.forwarded_to(child),
        ):
            try:
                stdout, stderr = child.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                stdout, _ = child.communicate()
                message = (
                    f"timed out after {timeout:g} s{_where(stdout)}: the op hangs, "
                    "or needs a larger --timeout"
                )
                return every_cell("error", "process", message, timeout)
            except BaseException:  # interrupted without opsdk.harness.run.interrupts: no orphan
                child.kill()
                raise
        if report.exists():
            return [Result.from_json(r) for r in json.loads(report.read_text())["results"]]
        seconds = time.perf_counter() - start
        if interrupts.requested():  # stopped before it could write a report
            return every_cell("not run")
        last = (stderr.strip().splitlines() or [""])[-1]
        message = (
            f"the op's process {_death(child.returncode)}{_where(stdout)}"
            + (f" ({last})" if last else "")
            + "; run that cell without --isolate under gdb, or with python -X faulthandler,"
            " to see where"
        )
        return every_cell("error", "process", message, seconds)
