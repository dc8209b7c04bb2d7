"""The progress lines: an op's skips folded, ``-q``'s one line per op, a cell that runs
long written before its outcome."""

from __future__ import annotations

import io
import time

from opsdk.harness.cell import Result
from opsdk.harness.run import progress as progress_module
from opsdk.harness.run.progress import Progress


def _cell(progress: Progress, op: str, label: str, status: str, wait: float = 0.0) -> None:
    progress.start(f"{op} [{label}]", op=op)
    time.sleep(wait)
    progress.finish([Result(op, label.split("-")[0], "static", status, seconds=0.5)])


def _run(progress: Progress, held_wait: float = 0.0) -> None:
    _cell(progress, "ns::a", "schema-static", "pass")
    for label in ("fake-static", "fake-dynamic", "npugraph_ex-static", "npugraph_ex-dynamic"):
        _cell(progress, "ns::b", label, "skip")
    _cell(progress, "ns::c", "schema-static", "skip")
    _cell(progress, "ns::c", "fake-static", "fail", wait=held_wait)
    progress.close()


def test_an_ops_skips_in_a_row_are_one_line_a_lone_skip_its_own():
    """The vllm-ascend audit wrote 63 "skip (0.00 s)" lines, five per op not audited."""
    stream = io.StringIO()
    _run(Progress(7, stream))
    assert stream.getvalue().splitlines() == [
        "[1/7] ns::a [schema-static] ... pass (0.50 s)",
        "[2-5/7] ns::b ... 4 skip",
        "[6/7] ns::c [schema-static] ... skip (0.50 s)",
        "[7/7] ns::c [fake-static] ... fail (0.50 s)",
    ]


def test_a_cell_that_runs_long_is_written_before_its_outcome_after_the_skips(monkeypatch):
    """A hang still leaves its cell the last line of the log."""
    monkeypatch.setattr(progress_module, "LONG", 0.05)
    stream = io.StringIO()
    progress = Progress(3, stream)
    _cell(progress, "ns::c", "schema-static", "skip")
    _cell(progress, "ns::c", "schema-dynamic", "skip")
    progress.start("ns::c [fake-static]", op="ns::c")
    deadline = time.monotonic() + 5
    while not stream.getvalue().endswith("... ") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.getvalue().splitlines() == [
        "[1-2/3] ns::c ... 2 skip",
        "[3/3] ns::c [fake-static] ... ",
    ]


def test_quiet_writes_one_line_per_op_with_its_counts():
    stream = io.StringIO()
    _run(Progress(7, stream, quiet=True))
    assert stream.getvalue().splitlines() == [
        "[1/7] ns::a ... 1 pass",
        "[2/7] ns::b ... 4 skip",
        "[6/7] ns::c ... 1 skip, 1 fail",
    ]
