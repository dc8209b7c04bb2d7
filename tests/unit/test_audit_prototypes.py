"""``opsdk audit --ir``: which CANN definitions are read from files and folders, which wins
when an op type is defined twice, and what is refused."""

import json
import shutil
import warnings
from pathlib import Path

import pytest

from opsdk.audit import prototypes
from opsdk.errors import SpecError
from opsdk.scaffold.cann import CannWarning

CANN = Path(__file__).parents[1] / "e2e" / "audit_library" / "cann"


def _read(*paths):
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        found = prototypes.read(paths)
    return found, [str(w.message) for w in heard if issubclass(w.category, CannWarning)]


def test_a_folder_gives_every_format_with_its_source():
    found, said = _read(CANN)
    assert said == []
    assert {t: (p.format, p.source.name) for t, p in found.items()} == {
        "ScaleAdd": ("REG_OP", "scale_add_proto.h"),
        "TeamRms": ("OpDef", "team_rms.cpp"),
        "SwapAdd": ("msopgen JSON", "swap_add.json"),
    }
    assert found["TeamRms"].op.ir.attrs[0].default is None  # REQUIRED: no default


def test_files_one_by_one_read_as_the_folder_does():
    """Each file's format is told by its text, as the folder's by where it lies."""
    folder, _ = _read(CANN)
    files, _ = _read(*sorted(p for p in CANN.rglob("*") if p.is_file()))
    read = lambda found: {t: (p.op, p.format) for t, p in found.items()}  # noqa: E731
    assert read(files) == read(folder)


def test_an_op_defined_twice_is_the_reg_ops_and_a_difference_is_said(tmp_path):
    shutil.copy(CANN / "op_graph" / "scale_add_proto.h", tmp_path)
    entry = json.loads((CANN / "swap_add.json").read_text())[0]
    entry["op"] = "ScaleAdd"  # inputs x1, x2: not the REG_OP's x, y
    (tmp_path / "scale_add.json").write_text(json.dumps([entry]))
    # a folder reads REG_OP headers first; files named on their own, in the order given
    for paths in ([tmp_path], [tmp_path / "scale_add.json", tmp_path / "scale_add_proto.h"]):
        found, said = _read(*paths)
        assert found["ScaleAdd"].format == "REG_OP"
        [warning] = said
        assert "define ScaleAdd differently: using the REG_OP" in warning


def test_refusals_are_one_line(tmp_path):
    with pytest.raises(SpecError, match=r"^--ir \S+: no such file or folder$"):
        prototypes.read([tmp_path / "missing"])
    with pytest.raises(SpecError, match="no op definition found"):
        prototypes.read([tmp_path])  # an empty folder
    (tmp_path / "bad_proto.h").write_text("REG_OP(Bad)\n    .INPUT(x, TensorType({DT_NOPE}))\n")
    with pytest.raises(SpecError, match="none of its 1 CANN definition files reads"):
        _read(tmp_path)
    with pytest.raises(SpecError, match="bad_proto.h"):  # a file named on its own must read
        prototypes.read([tmp_path / "bad_proto.h"])
