"""`opsdk new`: what it writes, that it writes all or nothing, and how it refuses bad input."""

import os
import re
import subprocess
import sys

import clang_format
import pytest
from scaffolded import implemented

from opsdk.axes import STYLES
from opsdk.scaffold import NewRequest, new

PACKAGE_FILES = {
    "pyproject.toml",
    "README.md",
    "tests/conftest.py",
    "tests/test_{op}.py",  # a first test: the op on npu tensors against its reference
    "{op}/__init__.py",
    "{op}/schema.py",
    "{op}/kernels.py",
    "{op}/fake.py",
    "{op}/converter.py",
    "{op}/ir.py",
    "{op}/specs.py",  # the default add's input specs; skeletons have none
}


def _files(root):
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("style", ["custom_op", "library"])
@pytest.mark.parametrize("inplace", [False, True])
def test_writes_one_module_per_concern(tmp_path, style, inplace):
    result = new(NewRequest("my_add", inplace=inplace, style=style, out=tmp_path))
    assert result.path == tmp_path / "my_add" and result.backup is None
    assert _files(result.path) == {f.format(op="my_add") for f in PACKAGE_FILES}
    schema = (result.path / "my_add" / "schema.py").read_text()
    if style == "custom_op":
        assert "torch.library.custom_op(" in schema and 'device_types="npu"' in schema
    else:
        assert 'Library("custom", "FRAGMENT")' in schema and '"PrivateUse1"' in schema
    fake = (result.path / "my_add" / "fake.py").read_text()
    assert ("meta.inplace(x, y)" if inplace else "meta.elementwise(x, y)") in fake
    converter = (result.path / "my_add" / "converter.py").read_text()
    assert "OP = torch.ops.custom.my_add.default" in schema
    assert "from .schema import OP" in converter
    assert "@torchair.register_fx_node_ge_converter(OP)" in converter
    assert 'ge.custom_op(\n        "MyAdd"' in converter
    assert not list(tmp_path.glob(".opsdk-new-*")), "staging directory left behind"


def test_custom_schema_gets_a_skeleton_that_says_implement_me(tmp_path):
    result = new(
        NewRequest("my_op", schema="my_op(Tensor x, *, float alpha=1.0) -> Tensor", out=tmp_path)
    )
    kernels = (result.path / "my_op" / "kernels.py").read_text()
    assert 'raise ImplementMe(__file__, "my_op_npu"' in kernels
    assert 'raise ImplementMe(__file__, "my_op_reference"' in kernels
    assert not (result.path / "my_op" / "specs.py").exists()
    # the fake suggests the opsdk.meta helper the schema fits, and still asks for the code
    fake = (result.path / "my_op" / "fake.py").read_text()
    assert "    #     return meta.same_as(x)\n    raise ImplementMe(__file__" in fake
    assert '"alpha": attr.Float(alpha)' in (result.path / "my_op" / "converter.py").read_text()
    assert 'Attr("alpha", "Float", 1.0)' in (result.path / "my_op" / "ir.py").read_text()


SCHEMAS = [
    None,
    "my_op(Tensor x, Tensor? w, Tensor[] xs, *, float alpha=1.0, int[2] k=[1,1], "
    'str mode="a\\"b", ScalarType? dtype=None) -> (Tensor a, Tensor b)',
    "my_op(Tensor(a!) x, Tensor(b!) y, int n) -> Tensor",
    "my_op(Tensor(a!) x, SymInt[] size, bool flag=False) -> ()",
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("schema", SCHEMAS)
def test_generated_code_is_formatted_and_lint_clean(tmp_path, style, schema):
    path = new(NewRequest("my_op", schema=schema, style=style, out=tmp_path)).path
    commands = [
        [sys.executable, "-m", "ruff", *command]
        for command in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."])
    ]
    sources = [str(p) for p in path.rglob("*.cpp")]
    assert len(sources) == (style == "cpp")
    if sources:
        commands.append(
            [clang_format.get_executable("clang-format"), "--dry-run", "-Werror", *sources]
        )
    for command in commands:
        done = subprocess.run(command, cwd=path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    # The schema is stated once: in schema.py's docstring, or the C++ library's comment.
    holder = path / "my_op" / ("my_op.cpp" if style == "cpp" else "schema.py")
    assert "Schema:" in holder.read_text()
    for module in (path / "my_op").glob("*.py"):
        if module != holder:
            assert "Schema:" not in module.read_text(), f"{module.name} repeats the schema"


def test_converter_and_ir_spell_an_attr_type_alike(scaffolds):
    """One word per type: the converter's ``attr.Float(alpha)`` is ir.py's ``"Float"``."""
    pkg = scaffolds.shared("my_op", schema=SCHEMAS[1]) / "my_op"
    converter = (pkg / "converter.py").read_text()
    written = dict(re.findall(r'"(\w+)"(?::|\] =) attr\.(\w+)\(', converter))
    declared = dict(re.findall(r'Attr\("(\w+)", "(\w+)"', (pkg / "ir.py").read_text()))
    expected = {"alpha": "Float", "k": "ListInt", "mode": "Str", "dtype": "DataType"}
    assert written == declared == expected


def test_a_search_function_written_in_torch_needs_no_import_of_its_own(scaffolds, tmp_path):
    """patterns.py imports torch: the search function a user writes is torch code."""
    schema = "my_scale(Tensor x, float s) -> Tensor"
    pkg = scaffolds.copy(tmp_path, "my_scale", schema=schema, pattern=True)
    patterns = pkg / "my_scale" / "patterns.py"
    text = re.sub(r"raise ImplementMe\([^)]*\)", "return torch.mul(x, s)", patterns.read_text())
    patterns.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    lint = [sys.executable, "-m", "ruff", "check", "--no-cache", "."]
    done = subprocess.run(lint, cwd=pkg, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_new_package_s_first_test_fails_until_its_kernels_are_written(scaffolds, tmp_path):
    """tests/test_OP.py, the op on npu tensors against its reference on the default case:
    a skeleton fails it (implement me), written kernels pass it, a wrong npu kernel fails it.
    The three packages' tests run in one pytest process."""
    kernel = "return (x * s).contiguous()"
    schema = "{}(Tensor x, float s) -> Tensor"
    skeleton = scaffolds.copy(tmp_path / "a", "my_first", schema=schema.format("my_first"))
    written = implemented(
        scaffolds, tmp_path / "b", "my_second", schema.format("my_second"), kernel
    )
    wrong = implemented(scaffolds, tmp_path / "c", "my_third", schema.format("my_third"), kernel)
    kernels = wrong / "my_third" / "kernels.py"
    kernels.write_text(kernels.read_text().replace(kernel, "return (x * s * 2).contiguous()", 1))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    tests = [str(p / "tests" / f"test_{p.name}.py") for p in (skeleton, written, wrong)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA"]
        + ["--import-mode=importlib", "-c", str(tmp_path / "pytest.ini"), *tests],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (skeleton, written, wrong)))},
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = re.findall(r"^(PASSED|FAILED) \S+/test_(my_\w+?)\.py::", done.stdout, re.M)
    outcomes = {op: outcome for outcome, op in summary}
    assert outcomes == {"my_first": "FAILED", "my_second": "PASSED", "my_third": "FAILED"}, (
        done.stdout + done.stderr
    )
    assert "implement me: my_first_reference()" in done.stdout


@pytest.mark.parametrize("style", ["custom_op", "library"])
def test_long_names_stay_within_the_line_length(tmp_path, style):
    """Docstrings name the op; a long namespace and name must not push a line past 100."""
    name = "a_rather_long_inplace_operator_name"
    path = new(
        NewRequest(name, inplace=True, namespace="some_team_ops_lib", style=style, out=tmp_path)
    ).path
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_existing_target_is_refused_without_force(tmp_path, opsdk_cli):
    (tmp_path / "my_add").mkdir()
    (tmp_path / "my_add" / "mine.txt").write_text("user data")
    run = opsdk_cli("new", "my_add", "--out", tmp_path)
    assert run.code == 2
    assert run.stderr.count("\n") == 1 and "--force" in run.stderr
    assert _files(tmp_path / "my_add") == {"mine.txt"}


def test_force_moves_the_old_package_aside(tmp_path, opsdk_cli):
    (tmp_path / "my_add").mkdir()
    (tmp_path / "my_add" / "mine.txt").write_text("user data")
    run = opsdk_cli("new", "my_add", "--out", tmp_path, "--force")
    assert run.code == 0, run.stderr
    assert (tmp_path / "my_add.bak1" / "mine.txt").read_text() == "user data"
    assert "my_add.bak1" in run.stdout
    assert (tmp_path / "my_add" / "my_add" / "kernels.py").is_file()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["new", "my-add"], "not a valid identifier"),
        (["new", "class"], "Python keyword"),
        (["new", "my_add", "--namespace", "aten"], "reserved"),
        (["new", "my_add", "--schema", "my_add(Tensor x"], "does not parse"),
        (["new", "my_add", "--schema", "my_add(Tensor y, Tensor(a!) x) -> Tensor(a!)"], "-> ()"),
        (["new", "my_add", "--inplace", "--schema", "my_add(Tensor x, Tensor y) -> ()"], "(a!)"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, opsdk_cli, argv, needle):
    out = tmp_path / "out"
    run = opsdk_cli(*argv, "--out", out)
    assert run.code == 2
    assert needle in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not out.exists() or not any(out.iterdir())


def test_unwritable_out_is_refused(opsdk_cli):
    # /proc refuses new directories even to root, so this holds in CI too.
    run = opsdk_cli("new", "my_add", "--out", "/proc/opsdk-out")
    assert run.code == 2 and "writable --out" in run.stderr and run.stderr.count("\n") == 1


def test_out_that_is_a_file_is_refused(tmp_path, opsdk_cli):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    run = opsdk_cli("new", "my_add", "--out", blocker)
    assert run.code == 2 and "--out" in run.stderr and run.stderr.count("\n") == 1
    assert blocker.read_text() == "x"


def test_failed_render_leaves_no_partial_files(tmp_path, monkeypatch):
    import opsdk.scaffold._render as scaffold

    def broken_format(package):
        assert (package / "my_add" / "kernels.py").is_file()  # it really was half-way
        raise scaffold.ScaffoldError("boom")

    monkeypatch.setattr(scaffold, "_format", broken_format)
    with pytest.raises(scaffold.ScaffoldError):
        new(NewRequest("my_add", out=tmp_path))
    assert list(tmp_path.iterdir()) == []
