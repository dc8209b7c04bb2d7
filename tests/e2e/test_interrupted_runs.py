"""Ctrl-C and SIGTERM during `opsdk check`, for real: a subprocess run of an add whose npu
kernel sleeps is signalled mid-cell; it stops after that cell (a second signal aborts
it), writes every report asked for with the cells left `not run`, prints the summary and
exits 130, without a traceback. With --isolate the op's own process stops the same way.
Two runs cover SIGINT, SIGTERM, the second signal and --isolate (whose child aborts as a
plain run does).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from scaffolded import edit

NAMESPACE = "interrupt_t"
CHECK = ("--backend", "eager,opcheck", "--shapes", "static,dynamic")  # eager cells first
MARK = "OPSDK_TEST_KERNEL_MARK"  # the file the kernel touches when it runs


@pytest.fixture(scope="module")
def slow_add(scaffolds, tmp_path_factory):
    """An add whose npu kernel marks that it ran and sleeps 50 ms a call: an eager cell
    calls it some 24 times, so a signal sent once it runs lands inside that cell."""
    pkg = scaffolds.copy(tmp_path_factory.mktemp("interrupts"), "my_add", namespace=NAMESPACE)
    body = '"""The op on npu tensors."""\n'
    slow = "    import os, time\n\n    open(os.environ['" + MARK + "'], 'a').close()\n"
    edit(pkg / "my_add" / "kernels.py", body, body + slow + "    time.sleep(0.05)\n")
    return pkg


def _interrupted(pkg, out, signals, *extra, once):
    """Run `opsdk check` with every report, wait until ``once(stdout so far, mark)`` is
    true, send ``signals`` 0.3 s apart; returns the finished process's code, stdout,
    stderr and JSON report."""
    argv = [sys.executable, "-m", "opsdk", "check", str(pkg), *CHECK, *extra]
    argv += ["--json", out / "r.json", "--report", out / "new" / "r.html"]
    argv += ["--markdown", out / "r.md"]
    mark = out / "kernel-ran"
    env = {**os.environ, MARK: str(mark)}
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    seen, deadline = b"", time.monotonic() + 300
    while not once(seen.decode(), mark) and child.poll() is None:
        assert time.monotonic() < deadline, seen.decode()
        os.set_blocking(child.stdout.fileno(), False)
        seen += child.stdout.read() or b""
        time.sleep(0.02)
    for signum in signals:
        child.send_signal(signum)
        time.sleep(0.3)
    stdout, stderr = child.communicate(timeout=300)
    stdout, stderr = (seen + stdout).decode(), stderr.decode()
    report = json.loads((out / "r.json").read_text()) if (out / "r.json").exists() else None
    return child.returncode, stdout, stderr, report


def _second_cell_started(stdout, mark):
    return f"[2/4] {NAMESPACE}::my_add [eager-dynamic] ... " in stdout


def _check_reports(out, code, stdout, stderr, report, ran):
    """Exit 130, no traceback, and every report with the cells after ``ran`` not run."""
    assert code == 130, stdout + stderr
    assert "Traceback" not in stderr, stderr
    counts = {status: n for status, n in (("pass", ran), ("not run", 4 - ran)) if n}
    headline = f"interrupted after {ran}/4 cells: " + ", ".join(
        f"{n} {s}" for s, n in counts.items()
    )
    assert stdout.rstrip().splitlines()[-4] == headline, stdout
    statuses = [r["status"] for r in report["results"]]
    assert statuses == ["pass"] * ran + ["not run"] * (4 - ran), report
    assert report["summary"] == counts
    assert (out / "new" / "r.html").read_text().count('<td class="not-run"') == 4 - ran
    markdown = (out / "r.md").read_text()
    assert markdown.startswith(f"## opsdk conformance: {headline}\n"), markdown
    table = [line for line in markdown.splitlines() if line.startswith(f"| {NAMESPACE}::")]
    assert "".join(table).count("·") == 4 - ran and "· not run" in markdown, markdown


def test_sigint_stops_after_the_current_cell_and_writes_every_report(slow_add, tmp_path):
    code, stdout, stderr, report = _interrupted(
        slow_add, tmp_path, [signal.SIGINT], once=_second_cell_started
    )
    _check_reports(tmp_path, code, stdout, stderr, report, ran=2)
    # The notice on a line of its own, then the cell's line again, ended by its outcome.
    cell = f"[2/4] {NAMESPACE}::my_add [eager-dynamic] ... "
    notice = "opsdk check: SIGINT: stopping after this cell; a second SIGINT aborts it"
    assert f"\n{cell}\n{notice}\n{cell}pass (" in stdout, stdout


def test_isolate_forwards_each_signal_a_second_aborts_the_cell(slow_add, tmp_path):
    """SIGTERM then SIGINT to the parent: its op's process (in its own session, so only
    the parent's forwarding reaches it) aborts the cell it is in and still reports."""
    code, stdout, stderr, report = _interrupted(
        slow_add,
        tmp_path,
        [signal.SIGTERM, signal.SIGINT],
        "--isolate",
        once=lambda _, mark: mark.exists(),
    )
    _check_reports(tmp_path, code, stdout, stderr, report, ran=0)
    assert "\nopsdk check: SIGTERM: stopping after this cell" in stdout, stdout
    assert "\nopsdk check: SIGINT: aborting the current cell" in stdout, stdout
    aborted = report["results"][0]
    assert aborted["message"] == "aborted by an interrupt", aborted
    assert f"[1/4] {NAMESPACE}::my_add [own process] ... 4 not run" in stdout
