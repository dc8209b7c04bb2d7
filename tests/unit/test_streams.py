"""Output that cannot reach the user costs output, never the run: a reader gone
(`| head`), a stdout on a full disk, an encoding without ``✓`` (`PYTHONIOENCODING=ascii`).

Each is made here in this process (a pipe whose read end is closed, /dev/full, an ASCII
stream) around ``opsdk doctor``, ``opsdk check`` and the progress lines; the same through
a real ``| head`` is in tests/e2e/test_reports.py.
"""

import contextlib
import io
import json
import os
import stat
import sys

import pytest

from opsdk import _streams, cli
from opsdk.harness.cell import Result
from opsdk.harness.run.progress import Progress


@pytest.fixture
def reader_gone(monkeypatch):
    """stdout is a pipe whose reader has exited, as `| head -n 2` leaves it. Set as the
    test runs: pytest's own capture sets sys.stdout again between a fixture and its test."""
    read, write = os.pipe()
    os.close(read)
    stream = open(write, "w")  # noqa: SIM115 - closed below
    yield lambda: monkeypatch.setattr(sys, "stdout", stream) or stream
    with contextlib.suppress(OSError):
        stream.close()


def _devnull(stream) -> bool:
    """Whether ``stream``'s file descriptor now points at /dev/null."""
    return os.fstat(stream.fileno()).st_rdev == os.stat(os.devnull).st_rdev and stat.S_ISCHR(
        os.fstat(stream.fileno()).st_mode
    )


def test_a_check_whose_reader_is_gone_still_writes_its_report(
    check_example, reader_gone, tmp_path, capsys
):
    report = tmp_path / "r.json"
    stdout = reader_gone()
    assert check_example("--json", str(report)) == 0
    assert json.loads(report.read_text())["summary"] == {"pass": 1}
    assert _devnull(stdout)  # the flush at exit has nowhere to fail
    assert capsys.readouterr().err == ""  # a reader that stops reading is said by nobody


def test_a_failing_run_keeps_its_exit_code_when_its_reader_is_gone(
    check_example, reader_gone, monkeypatch
):
    def failing(self, cells, cache, on_start, on_result, stop):
        on_start(cells[0])
        on_result(Result(cells[0].op.name, "eager", "static", "fail", "eager", "values differ"))
        return [Result(cells[0].op.name, "eager", "static", "fail", "eager", "values differ")]

    monkeypatch.setattr("opsdk.matrix_run._Check.run", failing)
    reader_gone()
    assert check_example() == 1


def test_doctor_whose_reader_is_gone_exits_0(reader_gone):
    stdout = reader_gone()
    assert cli.main(["doctor"]) == 0
    assert _devnull(stdout)


def test_a_progress_notice_survives_a_reader_gone(reader_gone):
    """A Ctrl-C's notice is written straight to the file descriptor, from a signal handler:
    past the stream that would drop it."""
    stdout = reader_gone()
    Progress(2, stdout).notice("opsdk check: interrupted: finishing the cell running")
    assert _devnull(stdout)


def test_a_stdout_on_a_full_disk_is_said_once_and_the_run_goes_on(monkeypatch, capsys):
    full = open("/dev/full", "w")  # noqa: SIM115 - closed below
    monkeypatch.setattr(sys, "stdout", full)
    assert cli.main(["doctor"]) == 0
    err = capsys.readouterr().err
    assert err == "opsdk: stdout: No space left on device: the rest of the output is dropped\n"
    with contextlib.suppress(OSError):
        full.close()


@pytest.fixture
def ascii_stdout(monkeypatch):
    """stdout in ASCII with strict errors, as PYTHONIOENCODING=ascii makes it (set when
    called, as ``reader_gone``); ``.buffer`` holds what was written."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    return lambda: monkeypatch.setattr(sys, "stdout", stream) or stream


def test_an_ascii_terminal_gets_ascii_marks_and_escapes(check_example, ascii_stdout, tmp_path):
    stdout = ascii_stdout()
    assert check_example("--json", str(tmp_path / "résumé.json")) == 0
    stdout.flush()
    out = stdout.buffer.getvalue().decode("ascii")
    assert "\nopsdk_examples::my_add .\n" in out
    assert "(s = static; . pass, F fail, E error, - skip, x xfail)" in out
    assert out.endswith(f"wrote {tmp_path}/r\\xe9sum\\xe9.json\n")


def test_text_an_encoding_cannot_carry_is_escaped(ascii_stdout):
    @_streams.kept
    def main() -> int:
        print("données ✓")
        return 7

    stdout = ascii_stdout()
    assert main() == 7
    stdout.flush()
    assert stdout.buffer.getvalue() == b"donn\\xe9es \\u2713\n"
