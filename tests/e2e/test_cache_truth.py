"""The cell cache tells the truth whatever happens during a run, end to end (`opsdk check`
processes sharing a package's cache): a source edited while the run runs, a full disk
under the TorchAir cache, a dangling symlink or a FIFO in the package, a cell cache that
cannot be written."""

import os
import re
import time
import zipfile

import pytest
from scaffolded import edit

from opsdk._runtime import locator
from opsdk.harness.run.cache import DIR_NAME, ENV_OFF

# Once per process, the first time the npu kernel runs: what an editor saves meanwhile.
_SAVES_WHILE_RUNNING = """\
    import os, pathlib
    saved = os.environ.pop("RACE_SAVES", None)
    if saved:
        pathlib.Path(__file__).with_name("converter.py").write_bytes(pathlib.Path(saved).read_bytes())
    return torch.add(x, y).contiguous()"""


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch):
    monkeypatch.delenv(ENV_OFF, raising=False)


def test_a_converter_edited_during_the_run_never_gets_its_results_served_for_the_other(
    scaffolds, tmp_path, opsdk_cli, monkeypatch
):
    """The run reads the sources once the package is imported; converter.py is imported
    in the first compiled cell. Saved in between, the compiled cells run the saved
    converter: their passes must not be served for the broken one the run started from."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="race")
    converter = pkg / "my_add" / "converter.py"
    fixed = tmp_path / "fixed_converter.py"
    fixed.write_text(converter.read_text())
    edit(
        converter,
        "    return ge.custom_op(",
        "    raise RuntimeError('broken')\n    return ge.custom_op(",
    )
    edit(
        pkg / "my_add" / "kernels.py",
        "    return torch.add(x, y).contiguous()",
        _SAVES_WHILE_RUNNING,
    )
    broken = converter.read_text()
    check = ("check", pkg, "--backend", "eager,ge", "--shapes", "static")

    monkeypatch.setenv("RACE_SAVES", str(fixed))
    first = opsdk_cli(*check, json_report=True)
    assert first.code == 0, first.stdout + first.stderr
    assert f"opsdk: {converter} changed during the run" in first.stdout

    converter.write_text(broken)  # the code the run started from (undone in the editor)
    monkeypatch.delenv("RACE_SAVES")
    again = opsdk_cli(*check, json_report=True)
    assert again.code == 1, again.stdout + again.stderr
    [ge] = again.cells(column="ge")
    assert (ge["status"], ge["layer"], ge["cached"]) == ("fail", "converter", False)
    assert "RuntimeError: broken" in ge["message"]


# At the end of the package's import, once: an editor saves kernels.py meanwhile.
_SAVES_WHILE_IMPORTING = """
import os as _os, pathlib as _pathlib
_saved = _os.environ.pop("RACE_SAVES", None)
if _saved:
    _pathlib.Path(__file__).with_name("kernels.py").write_bytes(_pathlib.Path(_saved).read_bytes())
"""


def test_a_kernel_saved_while_the_package_was_imported_never_gets_its_result_served(
    scaffolds, tmp_path, opsdk_cli, monkeypatch
):
    """kernels.py is imported with the package, before the sources are read: a file saved
    since the import began may not be the code the run has."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="early")
    kernels = pkg / "my_add" / "kernels.py"
    broken = tmp_path / "broken_kernels.py"
    broken.write_text(kernels.read_text().replace("torch.add(x, y).contiguous()", "x - y"))
    with (pkg / "my_add" / "__init__.py").open("a") as init:
        init.write(_SAVES_WHILE_IMPORTING)
    check = ("check", pkg, "--backend", "eager", "--shapes", "static")

    monkeypatch.setenv("RACE_SAVES", str(broken))
    first = opsdk_cli(*check)
    assert first.code == 0, first.stdout + first.stderr  # the kernel imported, not the file
    assert f"opsdk: {kernels} changed during the run" in first.stdout

    monkeypatch.delenv("RACE_SAVES")
    again = opsdk_cli(*check, json_report=True)
    assert again.code == 1, again.stdout + again.stderr
    [eager] = again.report["results"]
    assert (eager["status"], eager["layer"], eager["cached"]) == ("fail", "eager", False)


_DISK_FULL = """\
import errno, os, zipfile

def _full(self, member, targetpath, pwd):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(targetpath))

zipfile.ZipFile._extract_member = _full
"""


def test_a_full_disk_under_the_torchair_cache_is_setup_never_cached_and_reported(
    scaffolds, tmp_path, opsdk_cli, monkeypatch, wheel
):
    """No room to extract TorchAir (a sitecustomize makes every extraction fail with ENOSPC)
    is the machine's failure: layer setup, not cached (the next run, with room, runs those
    cells), and the report is written without fetching again."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="full")
    faults = tmp_path / "faults"
    faults.mkdir()
    (faults / "sitecustomize.py").write_text(_DISK_FULL)
    torch_npu = tmp_path / f"torch_npu-{locator.expected_torch_npu_version()}-py3-none-any.whl"
    with zipfile.ZipFile(torch_npu, "w") as zf:
        zf.writestr("torch_npu/dynamo/torchair/__init__.py", "")
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(faults), os.environ.get("PYTHONPATH", "")])
    )
    monkeypatch.setenv(locator.ENV_CACHE_DIR, str(tmp_path / "full-disk"))
    monkeypatch.setenv(locator.ENV_WHEEL, str(torch_npu))
    check = ("check", pkg, "--backend", "eager,ge,npugraph_ex", "--shapes", "static")

    full = opsdk_cli(*check, json_report=True)
    assert full.code == 1 and full.report is not None, full.stdout + full.stderr
    assert "Traceback" not in full.stderr
    for cell in full.cells(column="ge") + full.cells(column="npugraph_ex"):
        assert (cell["status"], cell["layer"]) == ("error", "setup")
        assert "No space left on device" in cell["message"]
        assert locator.ENV_CACHE_DIR in cell["message"]
    assert full.report["environment"]["torchair"].startswith("offline (not fetched)")
    assert list((tmp_path / "full-disk").iterdir()) == []  # no scratch left behind

    for name in ("PYTHONPATH", locator.ENV_CACHE_DIR, locator.ENV_WHEEL):
        monkeypatch.delenv(name)
    room = opsdk_cli(*check, json_report=True)
    assert room.code == 0, room.stdout + room.stderr
    assert [(c["column"], c["cached"]) for c in room.report["results"]] == [
        ("eager", True),
        ("ge", False),
        ("npugraph_ex", False),
    ]


@pytest.mark.parametrize(("odd", "flags"), [("dangling symlink", ["--no-cache"]), ("fifo", [])])
def test_an_editors_lock_file_or_a_fifo_in_the_package_costs_nothing(
    scaffolds, tmp_path, opsdk_cli, odd, flags
):
    """An editor's lock file (emacs': a symlink to nowhere) made the digest of the sources
    raise, even with --no-cache (a report records the digest), and a FIFO made it wait for a
    writer forever once the cells were done: neither is a source."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="odd")
    if odd == "fifo":
        os.mkfifo(pkg / "my_add" / "events")
    else:
        (pkg / "my_add" / ".#kernels.py").symlink_to("someone@host.4242:1700000000")
    start = time.monotonic()
    check = ("check", pkg, "--backend", "eager", "--shapes", "static", *flags)
    run = opsdk_cli(*check, json_report=True, timeout=120)
    assert run.code == 0 and run.report is not None, run.stdout + run.stderr
    assert time.monotonic() - start < 60


def test_an_unwritable_cell_cache_is_said_on_a_line_of_its_own(scaffolds, tmp_path, opsdk_cli):
    """The notice went to stderr in the middle of the progress line of the cell running."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="unw")
    (pkg / DIR_NAME).write_text("a file where the cache would go")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static")
    assert run.code == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    [said] = [line for line in lines if "cell cache" in line]
    assert said.startswith(f"opsdk: cannot write the cell cache at {pkg / DIR_NAME} (")
    assert said.endswith("): results are not cached")
    assert any(
        re.fullmatch(r"\[1/1\] unw::my_add \[eager-static\] \.\.\. pass \(.+ s\)", line)
        for line in lines
    ), run.stdout
