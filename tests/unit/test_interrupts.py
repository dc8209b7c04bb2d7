"""Ctrl-C and SIGTERM during a run: the ladder (stop after the cell, abort it, end the
process), the matrix's ``not run`` cells, and how every report shows them.

Signals are sent to this process for real; the end-to-end runs (a real `opsdk check`
interrupted, with --isolate too) are in tests/e2e/test_interrupted_runs.py.
"""

import io
import os
import signal
from types import SimpleNamespace

import pytest

from opsdk import report
from opsdk.harness.cell import Cell, Result
from opsdk.harness.run import _matrix, interrupts
from opsdk.harness.run.progress import Progress
from opsdk.report import html as html_report
from opsdk.report import markdown as markdown_report

CELLS = [
    Cell(SimpleNamespace(name="ns::op"), backend, shapes)
    for backend in ("eager", "opcheck")
    for shapes in ("static", "dynamic")
]


def _signal(signum):
    os.kill(os.getpid(), signum)  # the handler runs before os.kill returns to Python code


def test_a_first_signal_asks_to_stop_a_second_aborts_and_the_handlers_come_back(capfd):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with interrupts.Interrupts() as interrupted:
        assert not interrupts.requested()
        _signal(signal.SIGTERM)
        assert interrupted.requested and interrupts.requested()
        with pytest.raises(KeyboardInterrupt):
            _signal(signal.SIGINT)
    assert not interrupts.requested()
    assert {s: signal.getsignal(s) for s in before} == before
    err = capfd.readouterr().err
    assert "opsdk check: SIGTERM: stopping after this cell; a second SIGTERM aborts it" in err
    assert "opsdk check: SIGINT: aborting the current cell" in err


STOPPING = "opsdk check: SIGINT: stopping after this cell; a second SIGINT aborts it"


@pytest.fixture(params=["text buffer", "file"])
def stream(request, tmp_path):
    """What a progress printer writes to: a stream with no file (pytest's capture), or one
    with a file, which a notice writes to directly."""
    if request.param == "text buffer":
        yield io.StringIO()
        return
    with open(tmp_path / "log", "w+") as file:
        yield file


def _log(stream) -> str:
    stream.flush()
    stream.seek(0)
    return stream.read()


def test_a_notice_amid_a_cell_gets_a_line_of_its_own_and_the_outcome_its_label(stream):
    progress = Progress(2, stream)
    progress.notice("before any cell")  # no line open: nothing to end
    progress.start("ns::op [eager-static]")
    with interrupts.Interrupts() as interrupted:
        interrupted.say = progress.notice
        _signal(signal.SIGINT)
    assert _log(stream).endswith("[1/2] ns::op [eager-static] ... ")  # a log ending here names it
    stream.seek(0, io.SEEK_END)
    progress.finish([Result("ns::op", "eager", "static", "pass", seconds=0.25)])
    assert _log(stream).splitlines() == [
        "before any cell",
        "[1/2] ns::op [eager-static] ... ",
        STOPPING,
        "[1/2] ns::op [eager-static] ... pass (0.25 s)",
    ]


class _Child:
    """What the ladder uses of a subprocess.Popen: the signals it was sent."""

    def __init__(self):
        self.signals = []

    def send_signal(self, signum):
        self.signals.append(signum)


def test_an_ops_process_gets_each_signal_once_and_aborts_on_the_second_itself():
    early, late = _Child(), _Child()
    with interrupts.Interrupts():
        with interrupts.forwarded_to(early):
            _signal(signal.SIGINT)
            _signal(signal.SIGINT)  # no KeyboardInterrupt here: the child aborts its cell
        with interrupts.forwarded_to(late):  # started after the stop: must not run on
            pass
    assert early.signals == [signal.SIGINT, signal.SIGINT]
    assert late.signals == [signal.SIGINT, signal.SIGINT]


def _run(monkeypatch, cell_result, stop):
    """run_matrix over CELLS with ``cell_result`` as each cell's run; ``stop(ran)`` sees the
    cells run so far (None: no stop)."""
    ran, reported = [], []

    def run_cell(cell, dump_dir=None, cache=None):
        ran.append(cell)
        return cell_result(cell)

    monkeypatch.setattr(_matrix, "run_cell", run_cell)
    results = _matrix.run_matrix(
        CELLS, on_result=reported.append, stop=stop and (lambda: stop(ran))
    )
    return ran, reported, results


def _passed(cell):
    return Result(cell.op.name, cell.column, cell.shapes, "pass")


def test_a_stopped_run_marks_the_cells_it_did_not_reach_not_run(monkeypatch):
    ran, reported, results = _run(monkeypatch, _passed, stop=lambda ran: len(ran) == 2)
    assert len(ran) == 2 and reported == results[:2]
    assert [r.status for r in results] == ["pass", "pass", "not run", "not run"]
    assert [(r.column, r.shapes) for r in results] == [(c.column, c.shapes) for c in CELLS]


def test_an_aborted_cell_is_not_run_and_says_so(monkeypatch):
    def cell_result(cell):
        if cell is CELLS[1]:
            raise KeyboardInterrupt
        return _passed(cell)

    ran, reported, results = _run(monkeypatch, cell_result, stop=lambda ran: False)
    assert ran == CELLS[:2]
    assert [r.status for r in results] == ["pass", "not run", "not run", "not run"]
    assert results[1].message.startswith("aborted after ") and reported == results[:2]
    assert results[2].message == ""


def test_without_stop_an_interrupt_propagates(monkeypatch):
    def cell_result(cell):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(monkeypatch, cell_result, stop=None)


RESULTS = [
    Result("ns::op", "eager", "static", "pass"),
    Result("ns::op", "eager", "dynamic", "fail", "eager", "differs"),
    Result("ns::op", "opcheck", "static", "not run", None, "aborted after 2.0 s", 2.0),
    Result("ns::op", "opcheck", "dynamic", "not run"),
]


def test_every_report_shows_not_run_cells_and_how_far_the_run_got():
    headline = "interrupted after 2/4 cells: 1 pass, 1 fail, 2 not run"
    assert report.summary(RESULTS) == headline
    terminal = report.matrix(RESULTS)
    assert "ns::op ✓ F     · ·" in terminal and "· not run)" in terminal
    assert terminal.endswith(headline)
    assert "not run" not in report.matrix(RESULTS[:2])  # the legend's entry only when needed
    markdown = markdown_report.render(RESULTS)
    assert f"## opsdk conformance: {headline}" in markdown
    assert "| ns::op | `✓✗` `eager` | `··` |" in markdown and "· not run)." in markdown
    page = html_report.render(RESULTS, {})
    assert page.count('<td class="not-run">') == 2 and "aborted after 2.0 s" in page
