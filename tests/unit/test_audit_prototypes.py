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
        assert said == []  # kept with the definition until an audit uses it
        [warning] = found["ScaleAdd"].warnings
        assert f"define ScaleAdd differently: using {header}" in warning


def test_a_definitions_warnings_are_said_once_used_and_the_unused_in_one_line(tmp_path):
    """A folder of many op types says nothing one by one of those no op lowers to."""
    shutil.copy(CANN / "op_graph" / "scale_add_proto.h", tmp_path)
    entry = json.loads((CANN / "swap_add.json").read_text())[0]
    entry["op"] = "ScaleAdd"
    (tmp_path / "scale_add.json").write_text(json.dumps([entry]))
    found, _ = _read(tmp_path)
    line = prototypes.unused(found)
    assert line == (
        "--ir: 1 warning(s) on the definitions of 1 op type(s) no op lowered to, not said "
        "one by one: ScaleAdd"
    )
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        prototypes.used(found["ScaleAdd"])
        prototypes.used(found["ScaleAdd"])  # once a process
    assert [str(w.message) for w in heard] == list(found["ScaleAdd"].warnings)
    assert prototypes.unused(found) == ""


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


# TorchAir's generated GE API as it documents its ops (docstrings, ``\n`` escapes kept).
GENERATED = '''\
def GatherShapes(x):
    """REG_OP(GatherShapes)\\n
    .DYNAMIC_INPUT(x, TensorType::ALL())\\n
    .OUTPUT(y, TensorType({DT_INT64}))\\n
    .REQUIRED_ATTR(axes, ListListInt)\\n
    """


def Fill(dims, value):
    """REG_OP(Fill)\\n
    .INPUT(dims, TensorType({DT_INT32, DT_INT64}))\\n
    .INPUT(value, TensorType({DT_FLOAT, DT_FLOAT16}))\\n
    .OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))\\n
    .OP_END_FACTORY_REG(Fill)\\n
    """
'''


def test_a_file_of_many_reg_ops_reads_each_one_an_unreadable_one_a_warning_naming_it(tmp_path):
    (tmp_path / "auto_generated_ge_raw_ops.py").write_text(GENERATED)
    found, said = _read(tmp_path / "auto_generated_ge_raw_ops.py")
    assert list(found) == ["Fill"]
    assert said == [] and found["Fill"].warnings == ()  # not Fill's to say
    assert "REG_OP(GatherShapes).axes: attr type 'ListListInt'" in prototypes.unused(found)


def test_standard_cann_ops_are_known_to_the_ge_stand_in_from_torchair_s_api(monkeypatch):
    """Without --ir, a library's ``ge.custom_op("GroupedMatmul", ...)`` finds its IR, as on
    an NPU host whose CANN holds the standard ops (the wheel's own generated GE API)."""
    from opsdk.audit import library
    from opsdk.offline.ge import standin

    monkeypatch.setattr(standin, "_STANDARD", [])
    assert standin.get_registered_ir_def("GroupedMatmul")[0] == "ERROR"
    standin.know_standard_ops(library._standard_ir)
    status, inputs, outputs, _ = standin.get_registered_ir_def("GroupedMatmul")
    assert status == "SUCCESS" and ("x", "dynamic") in inputs and ("y", "dynamic") in outputs
    assert standin.get_registered_ir_def("Fill")[0] == "SUCCESS"
    assert standin.get_registered_ir_def("GatherShapes")[0] == "ERROR"  # does not read
    assert standin.get_registered_ir_def("NoSuchOp")[0] == "ERROR"
