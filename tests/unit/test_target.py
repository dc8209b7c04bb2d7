"""Loading what `opsdk check` is pointed at, and saying why an op package does not import."""

import sys
from types import SimpleNamespace

import pytest
import torch

from opsdk import harness
from opsdk.errors import TargetError
from opsdk.harness.run import target


def test_a_schema_torch_refuses_is_shown_with_torchs_caret(tmp_path):
    pkg = tmp_path / "tgt_bad_schema"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import torch\n"
        'LIB = torch.library.Library("tgt_bad", "FRAGMENT")\n'
        'LIB.define("f(Tensor x, *, int[] s=1) -> Tensor")\n'
    )
    with pytest.raises(TargetError) as err:
        target.load(str(pkg))
    head, text, caret = str(err.value).splitlines()
    assert head.startswith("importing tgt_bad_schema failed: RuntimeError: expected [ but found")
    assert head.endswith("`python -c 'import tgt_bad_schema'` works")
    assert text == "f(Tensor x, *, int[] s=1) -> Tensor"
    assert caret.strip() == "~ <--- HERE" and text[caret.index("~")] == "1"


def test_other_import_errors_stay_one_line(tmp_path):
    pkg = tmp_path / "tgt_bad_value"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('raise ValueError("first\\nsecond")\n')
    with pytest.raises(TargetError, match="ValueError: first; fix the package") as err:
        target.load(str(pkg))
    assert "\n" not in str(err.value)


def test_a_module_file_is_a_target_and_another_file_is_refused(tmp_path):
    (tmp_path / "tgt_one_file.py").write_text("VALUE = 7\n")
    assert target.load(str(tmp_path / "tgt_one_file.py")).VALUE == 7
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(TargetError, match="neither an op package directory nor a module's .py"):
        target.load(str(tmp_path / "notes.txt"))


_LIB = torch.library.Library("tgt_ops", "DEF")
_LIB.define("op(Tensor x) -> Tensor")
_LIB.define("other(Tensor x) -> Tensor")
_LIB.define("only_named.v2(Tensor x) -> Tensor")
OP, OTHER = torch.ops.tgt_ops.op.default, torch.ops.tgt_ops.other.default


def _package(ops):
    return SimpleNamespace(__name__="tgtpkg", OPS=ops)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        (
            (OP, "tgt_ops::other"),
            "tgtpkg.OPS entry 2 is 'tgt_ops::other', of type str: list the op overload, e.g. "
            "torch.ops.tgt_ops.other.default",
        ),
        (
            (torch.ops.tgt_ops.op,),
            "tgtpkg.OPS entry 1 is the op packet torch.ops.tgt_ops.op, not one of its overloads: "
            "write torch.ops.tgt_ops.op.default",
        ),
        ((torch.ops.tgt_ops.only_named,), "write torch.ops.tgt_ops.only_named.v2"),
        ((OP, 3), "tgtpkg.OPS entry 2 is 3, of type int: list the op overload, e.g. torch.ops"),
        (OP, "tgtpkg.OPS is of type OpOverload, not a tuple: write OPS = (torch.ops.ns.op"),
        ((OP, OTHER, OP), "tgtpkg.OPS entry 3 lists tgt_ops::op again (entry 1): list each op"),
    ],
    ids=["str", "packet", "packet without default", "int", "not a tuple", "twice"],
)
def test_an_ops_entry_of_the_wrong_kind_is_named_with_what_to_write(ops, message):
    """Each was a traceback (AttributeError: no _schema; TypeError: not iterable), and an
    op listed twice ran every cell twice."""
    with pytest.raises(TargetError) as err:
        harness.discover(_package(ops))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_ops_as_a_list_of_distinct_overloads_is_discovered():
    assert [op.name for op in harness.discover(_package([OP, OTHER]))] == [
        "tgt_ops::op",
        "tgt_ops::other",
    ]


def test_the_audit_reads_ops_as_check_does():
    from opsdk.audit.library import _ops_of

    with pytest.raises(TargetError, match=r"write torch\.ops\.tgt_ops\.op\.default$"):
        _ops_of(_package((torch.ops.tgt_ops.op,)), set())
    assert _ops_of(_package((OP, OTHER)), set()) == [OP, OTHER]


def _package_in(folder, name: str, module: str) -> None:
    (folder / name).mkdir()
    (folder / name / "__init__.py").write_text("IMPORTS = []\n")
    (folder / name / f"{module}.py").write_text(
        f"import {name}\n{name}.IMPORTS.append(__name__)\nVALUE = 3\n"
    )


def test_a_module_python_c_imports_from_here_is_a_target(tmp_path, monkeypatch):
    """The `opsdk` script's folder, not the current directory, heads its import path."""
    _package_in(tmp_path, "tgt_here", "sub")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    target.findable("tgt_here.sub")
    assert target.load("tgt_here.sub").VALUE == 3
    with pytest.raises(TargetError, match="'tgt_gone.sub' is neither a directory"):
        target.findable("tgt_gone.sub")
    with pytest.raises(TargetError, match="tgt_gone.py: no such file or directory"):
        target.findable("tgt_gone.py")


def test_a_file_inside_a_package_is_imported_as_the_packages_module(tmp_path):
    """As a top-level module of its own, what it registers would be registered twice."""
    _package_in(tmp_path, "tgt_infile", "mod")
    module = target.load(str(tmp_path / "tgt_infile" / "mod.py"))
    assert module.__name__ == "tgt_infile.mod"
    assert sys.modules["tgt_infile"].IMPORTS == ["tgt_infile.mod"]
