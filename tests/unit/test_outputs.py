"""Output paths (`--json`, `--report`, `--markdown`, `--dump`, `ir --out`, `coverage --json`)
are checked before any work: one line naming the flag, the path and the fix, exit 2; none
may point into the package under test. At the end they are written whole or not at all:
a disk that filled up meanwhile leaves the earlier file as it was (exit 3).

Unwritable places that refuse root too: /sys (any Linux, any user) and a read-only
mount (made here when the tests run as root, else a folder without write permission).
"""

import os
import stat
import sys
from pathlib import Path

import pytest
from refused_outputs import outputs_of, refused

from opsdk import _outputs, cli
from opsdk.errors import OpsdkError, OutputError
from opsdk.harness.cell import Result
from opsdk.harness.run import target as check_target


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
    message = refused({"--report": (tmp_path, "report.html")})
    assert message == (
        f"--report {tmp_path}: is a folder; give a file path, e.g. {tmp_path / 'report.html'}"
    )


@pytest.mark.parametrize("flag", ["--json", "--dump"])
def test_a_file_where_a_folder_must_be_is_named(tmp_path, flag):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("")
    path = blocker / "sub" / "r.json"
    message = refused(*outputs_of(flag, path))
    assert message == f"{flag} {path}: {blocker} is a file, not a folder; choose another path"


def test_a_file_given_for_a_folder_is_named(tmp_path):
    path = tmp_path / "dump"
    path.write_text("")
    assert refused(folders={"--out": path}).startswith(f"--out {path}: {path} is a file")


@pytest.mark.parametrize(("flag", "path"), [("--json", "/sys/r.json"), ("--dump", "/sys/opsdk")])
def test_a_place_that_refuses_writes_is_named_with_the_fix(flag, path):
    message = refused(*outputs_of(flag, path))
    assert message.startswith(f"{flag} {path}: cannot "), message
    assert message.endswith("; choose a writable location"), message


def test_two_flags_writing_one_file_are_refused(tmp_path):
    path = tmp_path / "r.out"
    message = refused({"--json": (path, "report.json"), "--markdown": (path, "report.md")})
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


def test_a_full_disk_leaves_the_earlier_report_whole(full_disk):
    path = full_disk / "r.json"
    path.write_text('{"earlier": "run"}\n')
    with pytest.raises(OutputError) as err:
        _outputs.write("--json", path, '{"this": "run"}\n' * 1000)
    assert err.value.exit_code == 3
    assert str(err.value) == (
        f"--json {path}: not written (No space left on device); the file there is as it "
        "was; free some space or choose another location"
    )
    assert path.read_text() == '{"earlier": "run"}\n'
    assert [p.name for p in full_disk.iterdir()] == ["r.json"]  # no temporary file left


def test_an_append_cut_short_is_cut_off_again(full_disk):
    summary = full_disk / "step_summary.md"
    summary.write_text("earlier step\n")
    with pytest.raises(OutputError, match=r"^\$GITHUB_STEP_SUMMARY .*No space left on device"):
        _outputs.write("$GITHUB_STEP_SUMMARY", summary, "## opsdk\n" * 100, append=True)
    assert summary.read_text() == "earlier step\n"


def test_a_report_replaces_the_file_a_symlink_names_and_keeps_its_mode(tmp_path):
    report = tmp_path / "reports" / "r.json"
    report.parent.mkdir()
    report.write_text("earlier\n")
    report.chmod(0o640)
    link = tmp_path / "latest.json"
    link.symlink_to(report)
    _outputs.write("--json", link, "now ✓\n")
    assert link.is_symlink() and report.read_text(encoding="utf-8") == "now ✓\n"
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    assert sorted(p.name for p in report.parent.iterdir()) == ["r.json"]


def test_a_device_is_written_straight_and_its_error_is_one_line():
    _outputs.write("--json", Path("/dev/null"), "{}\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # written through, not replaced
    with pytest.raises(OutputError) as err:
        _outputs.write("--markdown", Path("/dev/full"), "# r\n")
    assert str(err.value) == (
        "--markdown /dev/full: not written (No space left on device); free some space or "
        "choose another location"
    )


@pytest.fixture
def project(tmp_path):
    """An op project: the package ``mypkg`` (whose import leaves a mark) and its tests."""
    package = tmp_path / "proj" / "mypkg"
    (package.parent / "tests").mkdir(parents=True)
    package.mkdir()
    mark = f"open({str(tmp_path / 'imported')!r}, 'w').close()\n"
    (package / "__init__.py").write_text(f"{mark}OPS = ()\n")
    (package / "kernels.py").write_text("KERNEL = 1\n")
    yield package.parent
    assert not (tmp_path / "imported").exists(), "the package was imported to check outputs"


@pytest.mark.parametrize(
    ("flag", "relative", "example"),
    [
        ("--json", "mypkg/kernels.py", "report.json"),
        ("--markdown", "mypkg/new/r.md", "report.md"),
        ("--report", "mypkg/../mypkg/r.html", "report.html"),
        ("--dump", "mypkg", None),
    ],
)
def test_an_output_into_the_package_under_test_is_refused(project, flag, relative, example):
    path = project / relative
    files, folders = ({flag: (path, example)}, None) if example else ({}, {flag: path})
    with pytest.raises(OpsdkError) as err:
        _outputs.check(files, folders, check_target.sources(str(project)))
    package = project / "mypkg"
    assert str(err.value) == (
        f"{flag} {path}: is inside the package under test ({package}): write it outside, "
        f"e.g. {project / example if example else project}"
    )
    assert (package / "kernels.py").read_text() == "KERNEL = 1\n"
    assert not (package / "new").exists()


def test_an_output_beside_the_package_is_fine(project):
    sources = check_target.sources(str(project / "mypkg"))
    assert sources == (project / "mypkg",)
    _outputs.check(
        {"--json": (project / "report.json", "report.json")},
        {"--dump": project / "tests" / "dumps"},
        sources,
    )


def test_the_sources_of_a_module_file_and_of_a_module_name(project, monkeypatch):
    module = project / "single.py"
    module.write_text("OPS = ()\n")
    assert check_target.sources(str(module)) == (module,)
    monkeypatch.syspath_prepend(str(project))
    assert check_target.sources("mypkg.kernels") == (project / "mypkg",)  # mypkg is not imported
    assert check_target.sources("single") == (module,)
    assert check_target.sources("no_such_module_anywhere") == ()


def test_check_refuses_a_report_over_the_package_before_loading_it(project, capsys):
    kernels = project / "mypkg" / "kernels.py"
    assert cli.main(["check", str(project), "--json", str(kernels)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"opsdk check: error: --json {kernels}: is inside the package under")
    assert len(err.splitlines()) == 1
    assert kernels.read_text() == "KERNEL = 1\n"


def test_a_report_the_disk_cannot_take_costs_only_itself(check_example, tmp_path, capsys):
    markdown, page = tmp_path / "r.md", tmp_path / "r.html"
    code = check_example("--json", "/dev/full", "--markdown", str(markdown), "--report", str(page))
    out, err = capsys.readouterr()
    assert code == 3
    assert err == (
        "opsdk check: error: --json /dev/full: not written (No space left on device); free "
        "some space or choose another location\n"
    )
    assert "\nopsdk_examples::my_add ✓\n" in out and out.endswith(
        f"\n1 pass\nwrote {page}\nwrote {markdown}\n"
    )
    assert "1 pass" in markdown.read_text() and "1 pass" in page.read_text()


def test_a_disk_that_fills_up_keeps_the_earlier_report(
    check_example, full_disk, tmp_path, capsys, monkeypatch
):
    """Exit 3 even when a cell fails: the run's verdict is in the matrix, its report is not."""
    report = full_disk / "r.json"
    report.write_text('{"earlier": "run"}\n')
    step_summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    failing = Result("opsdk_examples::my_add", "eager", "static", "fail", "eager", "differ")
    monkeypatch.setattr("opsdk.matrix_run._Check.run", lambda *args, **kw: [failing])
    assert check_example("--json", str(report), "--markdown", str(tmp_path / "r.md")) == 3
    out, err = capsys.readouterr()
    assert err.startswith(f"opsdk check: error: --json {report}: not written (No space left")
    assert len(err.splitlines()) == 1
    assert report.read_text() == '{"earlier": "run"}\n'
    assert "\n1 fail\n" in out
    assert step_summary.read_text() == (tmp_path / "r.md").read_text() + "\n"
