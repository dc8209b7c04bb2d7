"""``opsdk audit --ir``: which CANN definitions are read from files and folders, which wins
when an op type is defined twice, and what is refused."""

import json
import shutil
import warnings
from pathlib import Path

import pytest

from opsdk.audit import prototypes
from opsdk.cann import CannWarning
from opsdk.errors import SpecError

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
    header = tmp_path / "scale_add_proto.h"
    for paths in ([tmp_path], [tmp_path / "scale_add.json", header]):
        found, said = _read(*paths)
        assert found["ScaleAdd"].format == "REG_OP"
        [warning] = said
        assert f"define ScaleAdd differently: using {header}" in warning


def test_test_folders_are_not_read(tmp_path):
    """ops-nn's tests/ut/op_host/ hold stub prototypes of other ops: never the op's own."""
    stubs = tmp_path / "op" / "tests" / "ut" / "op_host"
    stubs.mkdir(parents=True)
    shutil.copy(CANN / "op_graph" / "scale_add_proto.h", stubs)
    shutil.copy(CANN / "op_host" / "team_rms.cpp", stubs)
    with pytest.raises(SpecError, match="no op definition found"):
        prototypes.read([tmp_path / "op"])
    assert set(_read(stubs)[0]) == {"ScaleAdd", "TeamRms"}  # named itself, it is read


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


def test_an_op_host_folder_itself_gives_its_opdef_sources():
    found, said = _read(CANN / "op_host")
    assert said == []
    assert {t: (p.format, p.source.name) for t, p in found.items()} == {
        "TeamRms": ("OpDef", "team_rms.cpp")
    }


def test_a_register_fake_function_is_found_where_it_is_defined_not_in_torch():
    import inspect

    import torch

    from opsdk.audit.model import defined_at

    lib = torch.library.Library("opsdk_defined_at", "DEF")
    lib.define("f(Tensor x) -> Tensor")

    @torch.library.register_fake("opsdk_defined_at::f", lib=lib)
    def _fake(x):
        return torch.empty_like(x)

    kernel = torch._library.simple_registry.singleton.find("opsdk_defined_at::f").fake_impl.kernel
    at = defined_at(kernel.func)
    assert (at.path, at.line) == (__file__, inspect.getsourcelines(_fake)[1])
