"""`opsdk check --isolate`: each op in its own process, with a time limit.

A kernel that segfaults, aborts or hangs takes its process down; run in a child
per op, it costs only that op's cells, reported as errors with the signal or
the time, and the other ops still run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from opsdk.harness.model import Result


def _cells_of(op: str, backends, shapes, status: str, layer: str, message: str, seconds=0.0):
    return [Result(op, b, s, status, layer, message, seconds) for b in backends for s in shapes]


def _death(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode} without a report"


def run_op(target: str, op: str, backends, shapes, timeout: float, dump_dir=None) -> list[Result]:
    """Check one op in a child `opsdk check`; a crash or timeout becomes its cells' error."""
    with tempfile.TemporaryDirectory(prefix="opsdk-isolate-") as scratch:
        report = Path(scratch) / "report.json"
        argv = [
            sys.executable,
            "-m",
            "opsdk",
            "check",
            target,
            "--only-op",
            op,
            "--backend",
            ",".join(backends),
            "--shapes",
            ",".join(shapes),
            "--json",
            str(report),
        ]
        if dump_dir is not None:
            argv += ["--dump", str(dump_dir)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return _cells_of(
                op,
                backends,
                shapes,
                "error",
                "process",
                f"timed out after {timeout:g} s: the op hangs (or raise --timeout)",
                timeout,
            )
        if report.exists():
            return [Result(**r) for r in json.loads(report.read_text())["results"]]
        last = (done.stderr.strip().splitlines() or [""])[-1]
        return _cells_of(
            op,
            backends,
            shapes,
            "error",
            "process",
            f"the op's process {_death(done.returncode)}"
            + (f" ({last})" if last else "")
            + "; run it alone without --isolate under gdb or with faulthandler to see where",
        )
