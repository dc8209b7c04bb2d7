"""Output paths (`--json`, `--report`, `--markdown`, `--dump`, `ir --out`, `coverage --json`)
are checked before any work: one line naming the flag, the path and the fix, exit 2.

Unwritable places that refuse root too: /sys (any Linux, any user) and a read-only
mount (made here when the tests run as root, else a folder without write permission).
"""

import os
import subprocess
import sys

import pytest

from opsdk import _outputs, cli
from opsdk.errors import OpsdkError


@pytest.fixture
def read_only(tmp_path):
    """A folder nothing can be written in: a read-only tmpfs as root, else mode 0o555."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mount = ["mount", "-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("root without the right to mount: no read-only folder to test with")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _refused(files=None, folders=None) -> str:
    with pytest.raises(OpsdkError) as err:
        _outputs.check(files or {}, folders)
    message = str(err.value)
    assert "\n" not in message
    return message


def _outputs_of(flag, path):
    """``_outputs.check``'s arguments for one flag: --dump and --out name folders."""
    if flag in ("--dump", "--out"):
        return {}, {flag: path}
    return {flag: (path, "report.json")}, None


def test_missing_parent_folders_are_created_and_nothing_is_left_behind(tmp_path):
    report, dump = tmp_path / "out" / "sub" / "r.html", tmp_path / "dumps" / "ge"
    _outputs.check(
        {"--report": (report, "report.html"), "--json": (None, "report.json")}, {"--dump": dump}
    )
    assert report.parent.is_dir() and not report.exists()
    assert dump.is_dir() and not list(dump.iterdir())


def test_an_existing_file_is_kept_as_it_is(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("earlier run\n")
    _outputs.check({"--json": (path, "report.json")})
    assert path.read_text() == "earlier run\n"


def test_a_folder_given_for_a_file_names_a_file_inside_it(tmp_path):
    message = _refused({"--report": (tmp_path, "report.html")})
    assert message == (
        f"--report {tmp_path}: is a folder; give a file path, e.g. {tmp_path / 'report.html'}"
    )


@pytest.mark.parametrize("flag", ["--json", "--dump"])
def test_a_file_where_a_folder_must_be_is_named(tmp_path, flag):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("")
    path = blocker / "sub" / "r.json"
    message = _refused(*_outputs_of(flag, path))
    assert message == f"{flag} {path}: {blocker} is a file, not a folder; choose another path"


def test_a_file_given_for_a_folder_is_named(tmp_path):
    path = tmp_path / "dump"
    path.write_text("")
    assert _refused(folders={"--out": path}).startswith(f"--out {path}: {path} is a file")


@pytest.mark.parametrize(("flag", "path"), [("--json", "/sys/r.json"), ("--dump", "/sys/opsdk")])
def test_a_place_that_refuses_writes_is_named_with_the_fix(flag, path):
    message = _refused(*_outputs_of(flag, path))
    assert message.startswith(f"{flag} {path}: cannot "), message
    assert message.endswith("; choose a writable location"), message


@pytest.mark.parametrize(
    ("flag", "relative"), [("--json", "r.json"), ("--markdown", "sub/r.md"), ("--dump", "")]
)
def test_a_read_only_folder_is_refused(read_only, flag, relative):
    path = read_only / relative
    message = _refused(*_outputs_of(flag, path))
    assert message.startswith(f"{flag} {path}: cannot "), message
    assert "(Read-only file system)" in message or "(Permission denied)" in message, message


def test_two_flags_writing_one_file_are_refused(tmp_path):
    path = tmp_path / "r.out"
    message = _refused({"--json": (path, "report.json"), "--markdown": (path, "report.md")})
    assert message == f"--json and --markdown both write {path}: give each its own path"


@pytest.fixture
def target(tmp_path, monkeypatch):
    """An importable target that leaves a mark when imported: it must not be."""
    mark = tmp_path / "imported"
    (tmp_path / "paths_target.py").write_text(f"open({str(mark)!r}, 'w').close()\nOPS = ()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "paths_target"
    assert not mark.exists(), "the target was loaded before its output paths were checked"
    sys.modules.pop("paths_target", None)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--json", "/sys/r.json"],
        ["check", "--report", "/sys/r.html"],
        ["check", "--markdown", "/sys/r.md"],
        ["check", "--dump", "/sys/opsdk-dump"],
        ["coverage", "--json", "/sys/c.json"],
        ["ir", "--out", "/sys/opsdk-ir"],
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_every_command_checks_its_outputs_before_loading_the_target(target, capsys, args):
    command, flag, path = args
    assert cli.main([command, target, flag, path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"opsdk {command}: error: {flag} {path}: cannot "), err
    assert len(err.splitlines()) == 1, err
