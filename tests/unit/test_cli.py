"""The `opsdk` command line itself: version, help, usage errors, what a command imports,
and `opsdk new` refusing bad names before it creates anything."""

import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

import opsdk
from opsdk import _versions, cli
from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns
from opsdk.harness.variants import contexts, profiles
from opsdk.scaffold import _render, names

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


def _run(capsys, *argv) -> tuple[int, str, str]:
    """``opsdk ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        code = cli.main(list(argv))
    except SystemExit as done:  # argparse: --help, --version, usage errors
        code = done.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version_is_the_installed_distributions(capsys):
    installed = metadata.version("opsdk")
    assert _run(capsys, "--version") == (0, f"opsdk {installed}\n", "")
    assert opsdk.__version__ == installed


def test_a_checkout_never_installed_has_its_pyprojects_version(monkeypatch):
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    monkeypatch.setattr(_versions, "installed", lambda distribution: None)
    assert _versions.opsdk_version() == tomllib.loads(pyproject.read_text())["project"]["version"]


def test_check_help_lists_every_choice(capsys):
    code, out, _ = _run(capsys, "check", "--help")
    assert code == 0
    for choice in (*columns.names(), *SHAPE_MODES, *profiles.names(), *contexts.names()):
        assert choice in out, f"check --help does not list {choice}"


def test_a_usage_error_is_one_line_naming_the_commands_help(capsys):
    """argparse printed its 7-8 line usage block before the one line that mattered."""
    code, out, err = _run(capsys, "check", "pkg", "--bakend", "ge")
    assert (code, out) == (2, "")
    assert err == (
        "opsdk check: error: unrecognized arguments: --bakend ge: did you mean --backend? "
        "(see `opsdk check --help`)\n"
    )
    code, out, err = _run(capsys, "graph", "pkg", "-k", "op")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(
        "opsdk graph: error: the following arguments are required: --column/--backend"
    )
    code, _, err = _run(capsys, "chek")
    assert code == 2 and err.count("\n") == 1 and err.endswith("(see `opsdk --help`)\n")


def test_a_name_too_long_for_a_file_is_refused_before_anything_is_created(capsys, tmp_path):
    out_dir = tmp_path / "out" / "deeper"
    code, _, err = _run(capsys, "new", "a" * 300, "--out", str(out_dir))
    assert code == 2 and err.count("\n") == 1 and "200 characters" in err
    assert not (tmp_path / "out").exists()


def test_a_non_ascii_name_is_refused_with_torchs_rule(capsys, tmp_path):
    code, _, err = _run(capsys, "new", "加法", "--out", str(tmp_path / "out"))
    assert code == 2 and err.count("\n") == 1
    assert "torch's schema parser takes ASCII letters, digits and '_' only" in err
    schema = "my_op(Tensor 输入) -> Tensor"
    code, _, err = _run(capsys, "new", "my_op", "--schema", schema, "--out", str(tmp_path / "o"))
    assert code == 2 and "torch's schema parser takes ASCII names only ('输入' is not)" in err
    # The rule the message states is torch's: its schema parser refuses the name.
    with pytest.raises((RuntimeError, UnicodeError)):
        import torch

        torch._C.parse_schema("ns::加法(Tensor x) -> Tensor")


def test_cpp_style_without_clang_format_is_refused_before_anything_is_created(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "clang_format", None)  # as if opsdk[cpp] were missing
    code, _, err = _run(capsys, "new", "my_cpp", "--style", "cpp", "--out", str(tmp_path / "o"))
    assert code == 2 and "pip install 'opsdk[cpp]'" in err
    assert not (tmp_path / "o").exists()


@pytest.fixture
def unshadowed(monkeypatch):
    """`opsdk new`'s check that no other module answers to the package name asks a fresh
    interpreter (tests/e2e/test_new_refusals_scaffolded.py): not under test here."""
    monkeypatch.setattr(names, "_importable", lambda name, project: None)


def test_a_cann_attr_aclnn_cannot_take_refuses_the_cpp_style_in_one_line(
    capsys, tmp_path, unshadowed
):
    """The cpp style calls the op's aclnn API, which CANN generates no parameter for a
    ListString attr: refused before anything is written (the Python styles need no aclnn)."""
    source = tmp_path / "named_proto.h"
    source.write_text(
        "REG_OP(Named)\n    .INPUT(x, TensorType({DT_FLOAT}))\n"
        "    .OUTPUT(y, TensorType({DT_FLOAT}))\n    .REQUIRED_ATTR(names, ListString)\n"
        "    .OP_END_FACTORY_REG(Named)\n"
    )
    out = tmp_path / "o"
    argv = ["new", "named", "--from-cann", str(source), "--style", "cpp", "--out", str(out)]
    code, _, err = _run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1
    assert "Named: attr 'names' is a ListString, for which CANN generates no aclnn API" in err
    assert not out.exists()


def test_a_failure_after_out_was_made_removes_what_it_made(
    capsys, tmp_path, monkeypatch, unshadowed
):
    def fail(package):
        raise _render.ScaffoldError("formatting the generated code failed: (test)")

    monkeypatch.setattr(_render, "_format", fail)
    (tmp_path / "kept").mkdir()
    code, _, err = _run(capsys, "new", "my_add", "--out", str(tmp_path / "kept" / "a" / "b"))
    assert code == 2 and "formatting" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "kept"]
    assert list((tmp_path / "kept").iterdir()) == []


def _staging(out: Path, host: str, pid: int) -> Path:
    """A staging folder as `opsdk new` names it, with a file in it."""
    folder = out / f".opsdk-new-my_add-{host}-{pid}-x1y2z3w4"
    folder.mkdir(parents=True)
    (folder / "half_written.py").write_text("")
    return folder


def test_a_killed_news_staging_folder_is_removed_by_the_next_and_no_other(
    capsys, tmp_path, monkeypatch, unshadowed, dead_pid
):
    """SIGKILL/SIGTERM of `opsdk new` (2 of 12) left its .opsdk-new-* folder for good. The
    next `opsdk new` in that folder removes the ones whose process is gone; a live one's,
    another machine's and one it cannot tell the owner of stay."""
    monkeypatch.setattr(_render, "_format", lambda package: None)  # not under test: fast
    out = tmp_path / "o"
    orphan = _staging(out, _render._HOST, dead_pid)
    live = _staging(out, _render._HOST, os.getpid())
    elsewhere = _staging(out, "0" * 8 if _render._HOST != "0" * 8 else "1" * 8, dead_pid)
    unnamed = out / ".opsdk-new-my_add-abcd1234"  # an older opsdk's: no owner in its name
    unnamed.mkdir()
    code, _, err = _run(capsys, "new", "my_mul", "--out", str(out))
    assert code == 0, err
    assert not orphan.exists()
    assert live.exists() and elsewhere.exists() and unnamed.exists()


def test_of_two_news_at_once_the_second_to_publish_fails_and_moves_nothing(
    tmp_path, monkeypatch, unshadowed
):
    """Both found no my_add and rendered; the second used to move the first's package to
    my_add.bak1 and publish its own, without --force."""
    monkeypatch.setattr(_render, "_format", lambda package: None)
    target = tmp_path / "my_add"

    def the_other_publishes(project):
        target.mkdir()
        (target / "theirs.py").write_text("")

    with pytest.raises(_render.ScaffoldError) as err:
        _render.new(_render.NewRequest("my_add", out=tmp_path), then=the_other_publishes)
    assert str(err.value).startswith(
        f"{target} already exists (another opsdk new wrote it meanwhile): choose another --out"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_add"]  # no .bak1, no staging
    assert [p.name for p in target.iterdir()] == ["theirs.py"]


def test_opsdk_graph_checks_its_folder_before_any_work(capsys, tmp_path):
    (tmp_path / "taken").write_text("")
    code, out, err = _run(
        capsys, "graph", "json", "-k", "op", "--backend", "ge", "--shapes", "static",
        "--out", str(tmp_path / "taken" / "pictures"),
    )  # fmt: skip
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("opsdk graph: error: --out ") and "is a file, not a folder" in err


@pytest.fixture
def two_ops(tmp_path, monkeypatch):
    """An importable op package of two ops, ``twin_a`` and ``twin_b``."""
    (tmp_path / "twins").mkdir()
    (tmp_path / "twins" / "__init__.py").write_text(
        "import torch\n_lib = torch.library.Library('opsdk_unit_twins', 'DEF')\n"
        "_lib.define('twin_a(Tensor x) -> Tensor')\n_lib.define('twin_b(Tensor x) -> Tensor')\n"
        "ops = torch.ops.opsdk_unit_twins\nOPS = (ops.twin_a.default, ops.twin_b.default)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "twins"


@pytest.mark.parametrize(
    ("pattern", "found"),
    [
        ("twin", "matches opsdk_unit_twins::twin_a, opsdk_unit_twins::twin_b"),
        ("zz", "matches no op"),
    ],
)
def test_opsdk_graph_draws_one_op_and_says_so_otherwise(capsys, tmp_path, two_ops, pattern, found):
    out_dir = tmp_path / "drawn"
    argv = ["graph", two_ops, "-k", pattern, "--backend", "ge", "--shapes", "static"]
    code, out, err = _run(capsys, *argv, "--out", str(out_dir))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err == f"opsdk graph: error: -k {pattern!r} {found} of twins: name one op\n"
    assert not list(out_dir.rglob("*.*"))


def test_check_graphs_flag_takes_its_choices_only(capsys):
    code, _, err = _run(capsys, "check", "pkg", "--graphs", "some")
    assert code == 2 and "argument --graphs: invalid choice: 'some'" in err
    assert all(choice in err for choice in cli.check.GRAPHS)


_LAYOUT = ("columns", "shapes", "options", "contexts", "waivers", "ir", "no_cache", "last_failed")


def _layout(settings) -> dict:
    """The settings that lay out cells, paths made absolute (a child gets them so)."""

    def absolute(value):
        if isinstance(value, list):
            return [absolute(v) for v in value]
        return value.resolve() if isinstance(value, Path) else value

    return {name: absolute(getattr(settings, name)) for name in _LAYOUT}


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "pkg", "--column", "eager,ge", "--shapes", "dynamic", "--options", "all"],
        ["check", "pkg", "--backend", "eager,ge", "--shapes", "dynamic", "--options", "all"],
        ["check", "pkg", "--contexts", "view", "--no-cache", "--isolate"],
        ["check", "pkg", "--last-failed", "--isolate", "--timeout", "5"],
        ["audit", "lib", "--checks", "fake", "--waivers", "w.toml", "--ir", "a", "--ir", "b"],
    ],
)
def test_an_isolated_child_lays_out_the_parents_cells(argv, tmp_path):
    """--isolate's child gets the parent's settings as flags (Settings.child_flags): parsed
    again with --only-op, they lay out the same cells."""
    from opsdk import matrix_run

    parent = matrix_run.Settings.from_args(cli._parse(argv))
    again = [argv[0], argv[1], "--only-op", "ns::op", *parent.child_flags(None)]
    child = matrix_run.Settings.from_args(cli._parse(again))
    assert _layout(child) == _layout(parent)
    assert child.only_op == "ns::op" and not child.isolate and child.json is None


def test_a_childs_pictures_go_to_the_parents_folder(tmp_path):
    from opsdk import matrix_run

    parent = matrix_run.Settings.from_args(cli._parse(["check", "pkg", "--graphs", "all"]))
    flags = parent.child_flags(tmp_path)
    assert flags[-4:] == ["--graphs", "all", "--graphs-dir", str(tmp_path)]
    child = matrix_run.Settings.from_args(cli._parse(["check", "pkg", *flags]))
    assert child.pictures_folder() == tmp_path


@pytest.mark.parametrize(
    "argv, said",
    [
        (["audit", "no_such_lib_q"], "'no_such_lib_q' is neither a directory nor an importable"),
        (["audit", "torch_npu", "no_such_lib_q"], "'no_such_lib_q' is neither"),
        (["check", "gone/pkg"], "gone/pkg: no such file or directory"),
        (["audit", "torch_npu", "--ir", "gone"], "--ir gone: no such file or folder"),
        (["audit", "torch_npu", "--waivers", "w.toml"], "--waivers w.toml: no such file"),
    ],
)
def test_what_a_run_is_pointed_at_is_found_before_the_run_imports_anything(
    capsys, tmp_path, monkeypatch, argv, said
):
    """A mistyped target cost 10-15 s of imports (torch, TorchAir) before its one line."""
    from opsdk import matrix_run

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(matrix_run, "execute", lambda settings: pytest.fail("the run started"))
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"opsdk {argv[0]}: error: ") and said in err


@pytest.fixture
def no_ops(tmp_path):
    """A folder holding a package none of whose code names OPS, which would fail if imported."""
    package = tmp_path / "proj" / "noops"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('imported')\n")
    (package / "kernels.py").write_text("KERNEL = 1\n")
    return package.parent


@pytest.mark.parametrize("command", ["check", "coverage", "ir"])
def test_a_package_that_declares_no_ops_is_refused_before_it_is_imported(capsys, no_ops, command):
    code, out, err = _run(capsys, command, str(no_ops))
    assert (code, out) == (2, "")
    assert err == (
        f"opsdk {command}: error: noops declares no OPS: add OPS = "
        "(torch.ops.ns.op.default,) to its __init__.py\n"
    )


@pytest.mark.parametrize(
    "argv, said",
    [
        (["check", "gone/pkg"], "gone/pkg: no such file or directory"),
        (["check", "NO_OPS"], "noops declares no OPS"),
        (["check", "json", "--backend", "ge", "--modes", "npugraph_ex"], "no column of --modes"),
        (["audit", "torch_npu", "--ir", "gone"], "--ir gone: no such file or folder"),
    ],
)
def test_the_opsdk_command_refuses_before_it_starts_a_watched_run(
    capsys, monkeypatch, no_ops, argv, said
):
    """A plain check or audit runs in a child that imports torch and the target: the
    seconds that cost came before a one-line refusal that needs none of it."""
    from opsdk.harness.run import watch

    monkeypatch.delenv(watch.ENV_OFF, raising=False)
    monkeypatch.setattr(watch, "command", lambda *a: pytest.fail("the watched run started"))
    argv = [str(no_ops) if a == "NO_OPS" else a for a in argv]
    assert cli.command(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"opsdk {argv[0]}: error: ") and said in err


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["new", "--from-cann", "gone_proto.h"],
            "--from-cann gone_proto.h: no such file or folder",
        ),
        (["new", "my_op", "--into", "gone"], "--into gone: no such folder"),
    ],
)
def test_new_refuses_a_path_that_is_not_there_before_it_imports_the_scaffold(
    capsys, tmp_path, monkeypatch, argv, said
):
    """They cost 4-10 s of imports (torch, the templates) before their one line."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli.new, "run", lambda args: pytest.fail("the scaffold ran"))
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == f"opsdk new: error: {said}\n"


def test_ir_formats_are_the_exports():
    """`opsdk ir --format` lists, without importing torch, what opsdk.harness.exports writes."""
    from opsdk.harness import exports

    assert cli.ir.FORMATS == tuple(exports.FORMATS)


@pytest.mark.parametrize(
    "command", [["check", "pkg"], ["graph", "pkg", "-k", "op", "--shapes", "static", "--out", "d"]]
)
def test_backend_is_the_column_flag_by_its_old_name(command):
    """``--column`` is the flag's name; ``--backend``, its name before audit checks were
    columns too, still selects the same columns."""
    new, old = (cli._parse([*command, flag, "ge"]) for flag in ("--column", "--backend"))
    assert new.column == old.column == (["ge"] if command[0] == "check" else "ge")


def test_modes_keep_their_columns_and_a_choice_of_none_is_refused(capsys):
    assert columns.in_modes(columns.names(), ["npugraph_ex"]) == [
        "eager", "opcheck", "aot_eager", "npugraph_ex", "ascendc",
    ]  # fmt: skip
    assert "npugraph_ex" not in columns.in_modes(columns.names(), ["ge"])
    code, out, err = _run(
        capsys, "check", "json", "--backend", "ge,fusion", "--modes", "npugraph_ex"
    )
    assert (code, out) == (2, "")
    assert "--column ge,fusion: no column of --modes npugraph_ex" in err
