"""`opsdk new --from-cann DIR`: an AscendC project's ops become one package, atomically."""

import json
import os
import threading

import pytest

from opsdk import cli
from opsdk.cann import CannWarning
from opsdk.errors import SpecError
from opsdk.scaffold import NewRequest, into
from opsdk.scaffold.cann_project import definitions, new_project, package_of


def _tensor(name, types=("float16", "float")):
    return {"name": name, "param_type": "required", "format": ["ND"] * len(types), "type": types}


def _json_op(op, inputs, outputs, attrs=()):
    entry = {"op": op, "input_desc": [_tensor(n) for n in inputs]}
    entry["output_desc"] = [_tensor(n) for n in outputs]
    if attrs:
        entry["attr"] = list(attrs)
    return entry


SCALE = {"name": "alpha", "param_type": "optional", "type": "float", "default_value": "2.0"}


@pytest.fixture
def project(tmp_path):
    """A project as msopgen leaves it: the op JSON, CMake's JSON, op_host sources of which
    the tiling one defines no op, and a hidden folder's copy of the JSON."""
    root = tmp_path / "MyOps"
    (root / "op_host").mkdir(parents=True)
    ops = [_json_op("AddCustom", "xy", "z"), _json_op("ScaleInplace", "x", "x", [SCALE])]
    (root / "my_ops.json").write_text(json.dumps(ops))
    (root / "CMakePresets.json").write_text('{"version": 3, "configurePresets": []}')
    (root / "op_host" / "add_custom_tiling.cpp").write_text("// tiling only\nint x = 1;\n")
    (root / ".backup").mkdir()
    (root / ".backup" / "old.json").write_text(json.dumps([_json_op("Old", "x", "y")]))
    return root


def test_every_op_the_project_defines_once_by_name(project):
    found = definitions(project)
    assert [(d.name, d.op.ir.op_type, d.source.name) for d in found] == [
        ("add_custom", "AddCustom", "my_ops.json"),
        ("scale_inplace", "ScaleInplace", "my_ops.json"),
    ]


def test_one_op_defined_twice_alike_is_refused(project):
    (project / "again.json").write_text(json.dumps([_json_op("AddCustom", "xy", "z")]))
    with pytest.raises(SpecError, match="my_ops.json and again.json both define AddCustom"):
        definitions(project)


def test_a_folder_without_definitions_says_what_it_looks_for(tmp_path):
    with pytest.raises(SpecError, match=r"no op definition found; an AscendC project has op_host"):
        definitions(tmp_path)


@pytest.mark.parametrize(
    ("folder", "package"), [("AddCustom", "add_custom"), ("my-ops", "my_ops"), ("ops2", "ops2")]
)
def test_the_package_is_named_after_the_folder(tmp_path, folder, package):
    assert package_of(tmp_path / folder) == package


def test_a_folder_name_python_cannot_take_is_refused(tmp_path):
    with pytest.raises(SpecError, match="rename the directory"):
        package_of(tmp_path / "123")


def test_the_project_becomes_one_package_its_ops_added_as_into_does(project, tmp_path):
    made = new_project(NewRequest(None, namespace="proj", out=tmp_path / "out"), project).path
    assert made == tmp_path / "out" / "my_ops"
    recorded = into.read(made)
    assert recorded.package == made / "my_ops" and recorded.ops == ("add_custom", "scale_inplace")
    assert 'op_type="AddCustom"' in (made / "my_ops" / "ir.py").read_text()
    assert 'op_type="ScaleInplace"' in (made / "my_ops" / "scale_inplace" / "ir.py").read_text()
    # CANN's add is not opsdk's add: its reference is the user's to write.
    assert "raise ImplementMe" in (made / "my_ops" / "kernels.py").read_text()


def test_name_selects_one_op_of_the_project(project, tmp_path):
    made = new_project(NewRequest("ScaleInplace", out=tmp_path), project).path
    assert made.name == "scale_inplace" and into.read(made).ops == ("scale_inplace",)
    with pytest.raises(SpecError, match="defines no op 'nope'; it defines add_custom, scale"):
        new_project(NewRequest("nope", out=tmp_path), project)


def test_skip_unreadable_skips_an_op_opsdk_cannot_make_with_a_warning(project, tmp_path):
    bad = dict(SCALE, type="list_list_int")  # no torch type: the reader refuses the file
    (project / "bad.json").write_text(json.dumps([_json_op("Bad", "x", "y", [bad])]))
    silent = _json_op("Sleep", "x", "")  # no output: the torch side refuses the op
    (project / "sleep.json").write_text(json.dumps([silent]))
    (project / "testcases" / "st").mkdir(parents=True)  # msopst's cases are not ops
    case = dict(_json_op("AddCustom", "xy", "z"), case_name="Test_AddCustom_001")
    (project / "testcases" / "st" / "AddCustom_case.json").write_text(json.dumps([case]))
    with pytest.warns(CannWarning) as heard:
        made = new_project(NewRequest(None, out=tmp_path / "out"), project, True).path
    assert into.read(made).ops == ("add_custom", "scale_inplace")
    said = [str(w.message) for w in heard]
    assert any(m.startswith("skipped bad.json: ") and "list_list_int" in m for m in said)
    assert any(m.startswith("skipped sleep (sleep.json): ") for m in said), said
    assert not any("AddCustom_case" in m for m in said)


@pytest.mark.parametrize(
    ("file", "content", "said", "why"),
    [
        ("op_host/muls_def.cpp", 'OP_ADD(Muls)\nthis->Input("x")', "op_host/muls_def.cpp: ", ""),
        ("sleep.json", json.dumps([_json_op("Sleep", "x", "")]), "sleep (sleep.json): ", ""),
        (
            "op_host/bin_def.cpp",
            b"OP_ADD(Bin)\0\x7fELF",
            "op_host/bin_def.cpp: ",
            "bin_def.cpp: a binary file (NUL bytes), not a CANN definition",
        ),
        (
            "op_host/gbk_def.cpp",
            "OP_ADD(Gbk) // \u52a0\u6cd5".encode("gbk"),
            "op_host/gbk_def.cpp: ",
            "gbk_def.cpp: not UTF-8 text (byte 0xbc at offset 15): save it as UTF-8",
        ),
    ],
    ids=["unreadable", "no torch side", "binary", "not utf-8"],
)
def test_an_op_opsdk_cannot_make_fails_the_command_and_writes_nothing(
    project, tmp_path, capsys, file, content, said, why
):
    """The package would miss the op: exit 2 naming its file, the reason and the flag that
    skips it; nothing written, whichever op (the first or a later one) is refused. A binary
    or undecodable file is one such refusal (it was a UnicodeDecodeError traceback)."""
    (project / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "out"
    assert cli.main(["new", "--from-cann", str(project), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--from-cann {project}: {said}" in err and why in err and "\n" not in err
    assert err.endswith("(fix it, or pass --skip-unreadable to make the package without it)")
    assert not out.exists()
    argv = ["new", "--from-cann", str(project), "--out", str(out), "--skip-unreadable"]
    assert cli.main(argv) == 0
    assert f"warning: skipped {said}" in capsys.readouterr().err
    assert into.read(out / "my_ops").ops == ("add_custom", "scale_inplace")


def test_skip_unreadable_is_for_a_project(tmp_path, capsys):
    source = tmp_path / "a.json"
    source.write_text(json.dumps([_json_op("A", "x", "y")]))
    argv = ["new", "--from-cann", str(source), "--out", str(tmp_path), "--skip-unreadable"]
    assert cli.main(argv) == 2
    assert "--skip-unreadable is for --from-cann DIR" in capsys.readouterr().err


def test_a_project_none_of_whose_ops_can_be_made_leaves_nothing_behind(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "sleep.json").write_text(json.dumps([_json_op("Sleep", "x", "")]))
    with pytest.warns(CannWarning), pytest.raises(SpecError, match="can make none of its ops"):
        new_project(NewRequest(None, out=tmp_path / "out"), root, skip_unreadable=True)
    with pytest.raises(SpecError, match=r"sleep \(sleep.json\): .* pass --skip-unreadable"):
        new_project(NewRequest(None, out=tmp_path / "out"), root)
    assert not (tmp_path / "out").exists()


def test_cli_name_is_optional_for_a_one_op_file_and_says_what_to_give(tmp_path, capsys):
    source = tmp_path / "eye.json"
    source.write_text(json.dumps([_json_op("EyeLike", "x", "y")]))
    assert cli.main(["new", "--from-cann", str(source), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "eye_like" / "eye_like" / "ir.py").is_file()
    two = tmp_path / "two.json"
    two.write_text(json.dumps([_json_op("A", "x", "y"), _json_op("B", "x", "y")]))
    assert cli.main(["new", "--from-cann", str(two), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("defines several ops; name one of them: a, b")
    assert cli.main(["new"]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "opsdk new: error: give the op's NAME (or --attach NS::OP, or --from-cann FILE|DIR)"
    )


def test_cli_project_refuses_into(project, tmp_path, capsys):
    argv = ["new", "--from-cann", str(project), "--into", str(tmp_path)]
    assert cli.main(argv) == 2
    assert "--from-cann DIR makes one package" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["--pair"], ["--inplace"], ["--schema", "a(Tensor x) -> Tensor"]])
def test_the_definition_gives_the_schema_so_schema_flags_are_refused(tmp_path, capsys, flag):
    source = tmp_path / "a.json"
    source.write_text(json.dumps([_json_op("A", "x", "y")]))
    assert cli.main(["new", "a", "--from-cann", str(source), "--out", str(tmp_path), *flag]) == 2
    err = capsys.readouterr().err
    assert "--from-cann gives the schema" in err and "drop --schema, --inplace and --pair" in err
    assert not (tmp_path / "a").exists()


def test_every_export_of_a_fresh_package_is_written_before_its_reference(tmp_path, capsys):
    """The package's ir.py keeps the definition's data types: no export runs the fake
    function (which runs the reference, not written yet)."""
    source = tmp_path / "fresh.json"
    source.write_text(json.dumps([_json_op("FreshOp", "xy", "z")]))
    argv = ["new", "--from-cann", str(source), "--namespace", "t_fresh", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    capsys.readouterr()
    pkg = str(tmp_path / "fresh_op")
    assert cli.main(["ir", pkg, "--format", "aclnn"]) == 0
    assert "aclnnFreshOpGetWorkspaceSize(" in capsys.readouterr().out
    assert cli.main(["ir", pkg, "--format", "msopgen"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["output_desc"][0]["type"] == ["float16", "float"]


def test_an_op_is_named_as_its_own_file_spells_it(tmp_path, capsys):
    """CANN's files say top_k_v2 where splitting TopKV2 at capitals says top_kv2; a file
    named otherwise (several ops, another name) gives the split."""
    from opsdk.cann.files import op_name
    from opsdk.scaffold.cann_torch import pick

    assert op_name("TopKV2", tmp_path / "op_host" / "top_k_v2_def.cpp", "top_kv2") == "top_k_v2"
    assert op_name("TopKV2", tmp_path / "top_k_v2_proto.h", "top_kv2") == "top_k_v2"
    assert op_name("TopKV2", tmp_path / "ops.json", "top_kv2") == "top_kv2"
    source = tmp_path / "top_k_v2.json"
    source.write_text(json.dumps([_json_op("TopKV2", "xk", "y")]))
    assert cli.main(["new", "--from-cann", str(source), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "top_k_v2" / "top_k_v2" / "ir.py").is_file()
    _ops = [_json_op("TopKV2", "x", "y"), _json_op("AddN", "x", "y")]
    from opsdk import cann

    ops = cann.read(json.dumps(_ops))
    assert pick(ops, "top_k_v2", "f").ir.op_type == pick(ops, "top_kv2", "f").ir.op_type == "TopKV2"


def test_a_fifo_in_the_project_is_passed_over_not_waited_on(project, tmp_path):
    """Reading a FIFO blocks until a writer comes: the readers open nothing but regular
    files (the inference search reads every .cpp of the project's folders)."""
    fifo = project / "op_host" / "add_custom_infershape.cpp"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(definitions(project)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    if not done:  # let the blocked reader go, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert [d.name for d in done[0]] == ["add_custom", "scale_inplace"]
