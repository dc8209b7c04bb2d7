"""``--dump DIR`` failing mid-run (a full disk, the folder removed): its folder was checked
up front, so a write that fails later is the machine's problem, reported as ``setup``
naming the file, the OS error and the fix, and never hiding a failure of the op itself."""

import errno
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from opsdk.errors import SetupError
from opsdk.harness.cell import CellFailure
from opsdk.harness.columns import ge

GRAPHS = [SimpleNamespace(fx_graph=None, graph=SimpleNamespace(name="g", op=[]))]
NO_SPACE = f"({os.strerror(errno.ENOSPC)}); free space or drop --dump"


@pytest.fixture
def disk_full(tmp_path, monkeypatch):
    """A dump folder whose files cannot be written: the disk filled up mid-run."""
    folder = tmp_path / "dump" / "ns.op.default" / "ge-static"
    write_text = Path.write_text

    def write(path, *args, **kwargs):
        if folder in path.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write)
    return folder


def test_the_graphs_are_dumped_when_the_cell_ends(tmp_path):
    with ge.dumped(GRAPHS, tmp_path / "d"):
        pass
    assert (tmp_path / "d" / "graph0_ge.py").read_text() == "# GE graph g\n"


def test_a_dump_failing_mid_run_is_setup_naming_the_file_and_the_fix(disk_full):
    with pytest.raises(SetupError) as err, ge.dumped(GRAPHS, disk_full):
        pass  # the op passed
    assert str(err.value) == f"--dump cannot write {disk_full / 'graph0_ge.py'} {NO_SPACE}"


def test_a_dump_folder_that_cannot_be_made_again_is_setup_too(tmp_path):
    (tmp_path / "dump").write_text("")  # the folder went, a file took its place
    folder = tmp_path / "dump" / "ns.op.default" / "ge-static"
    with pytest.raises(SetupError) as err:
        ge.dump(GRAPHS, folder)
    assert str(err.value).startswith(f"--dump cannot write {folder} (")
    assert str(err.value).endswith("); free space or drop --dump")


def test_a_failing_dump_does_not_hide_the_ops_own_failure(disk_full):
    with pytest.raises(CellFailure, match="wrong numbers"), ge.dumped(GRAPHS, disk_full):
        raise CellFailure("ge-exec", "wrong numbers")


def test_without_dump_nothing_is_written(disk_full):
    with ge.dumped(GRAPHS, None):
        pass
    assert not disk_full.exists()
