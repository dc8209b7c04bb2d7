"""`opsdk check --isolate`: each op in its own process, with a time limit.

A kernel that segfaults, aborts or hangs takes its process down; run in a child
per op, it costs only that op's cells, reported as errors with the signal or
the time (and the cell the child was running), and the other ops still run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opsdk.harness.model import Result
from opsdk.report.progress import unfinished


def _cells_of(op: str, backends, shapes, message: str, seconds: float) -> list[Result]:
    return [
        Result(op, b, s, "error", "process", message, round(seconds, 4))
        for b in backends
        for s in shapes
    ]


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode} without a report"


def _where(stdout: str | bytes | None) -> str:
    """`` in ns::op [ge-dynamic]`` when the child's progress log names the cell it died in."""
    if isinstance(stdout, bytes):
        stdout = stdout.decode(errors="replace")
    label = unfinished(stdout or "")
    return f" in {label}" if label else ""


def run_op(
    target: str, op: str, backends, shapes, timeout: float, dump_dir=None, contexts=None
) -> list[Result]:
    """Check one op in a child `opsdk check`; a crash or timeout becomes its cells' error."""
    with tempfile.TemporaryDirectory(prefix="opsdk-isolate-") as scratch:
        report = Path(scratch) / "report.json"
        argv = [sys.executable, "-m", "opsdk", "check", target, "--only-op", op]
        argv += ["--backend", ",".join(backends), "--shapes", ",".join(shapes)]
        argv += ["--json", str(report)]
        if contexts is not None:
            argv += ["--contexts", ",".join(contexts)]
        if dump_dir is not None:
            argv += ["--dump", str(dump_dir)]
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            message = (
                f"timed out after {timeout:g} s{_where(expired.stdout)}: the op hangs, "
                "or needs a larger --timeout"
            )
            return _cells_of(op, backends, shapes, message, timeout)
        if report.exists():
            return [Result(**r) for r in json.loads(report.read_text())["results"]]
        last = (done.stderr.strip().splitlines() or [""])[-1]
        message = (
            f"the op's process {_death(done.returncode)}{_where(done.stdout)}"
            + (f" ({last})" if last else "")
            + "; run that cell without --isolate under gdb, or with python -X faulthandler,"
            " to see where"
        )
        return _cells_of(op, backends, shapes, message, time.perf_counter() - start)
