"""`opsdk new NAME --into DIR`: more ops in one op package, without touching the others."""

import hashlib
import subprocess
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from opsdk.scaffold import NewRequest, into

# Each `opsdk check` runs in its own process: tests can share the namespace.
NAMESPACE = "into_t"


def _tree(root):
    """Every file under ``root`` with a hash of its content (caches left out)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _package(scaffolds, out, **kwargs):
    return scaffolds.copy(out, "my_add", namespace=NAMESPACE, **kwargs)


def test_added_ops_are_new_files_and_one_record(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    before, pyproject = _tree(pkg), (pkg / "pyproject.toml").read_text()
    run = opsdk_cli("new", "my_mul", "--style", "custom_op", "--autograd", "--into", pkg)
    assert run.code == 0, run.stderr
    schema = "my_scale(Tensor x, *, float alpha=1.0) -> Tensor"
    run = opsdk_cli("new", "my_scale", "--style", "library", "--schema", schema, "--into", pkg)
    assert run.code == 0, run.stderr
    after = _tree(pkg)
    changed = {f for f in before if after[f] != before[f]}
    assert changed == {"pyproject.toml"}
    assert (pkg / "pyproject.toml").read_text().startswith(pyproject)
    added = set(after) - set(before)
    assert {f.split("/")[1] for f in added} == {"my_mul", "my_scale"}
    assert "my_add/my_mul/autograd.py" in added and "my_add/my_scale/schema.py" in added
    ops = tomllib.loads((pkg / "pyproject.toml").read_text())["tool"]["opsdk"]["ops"]
    namespace = NAMESPACE
    assert [o["schema"].split("::")[0] for o in ops] == [namespace, namespace]
    assert [o["style"] for o in ops] == ["custom_op", "library"]
    assert [o.get("autograd", False) for o in ops] == [True, False]


def test_check_and_pytest_run_every_op(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    assert opsdk_cli("new", "my_mul", "--into", pkg).code == 0
    run = opsdk_cli(
        "check", pkg, "--backend", "eager,opcheck,ge", "--shapes", "static", json_report=True
    )
    assert run.code == 0, run.stdout + run.stderr
    ops = {r["op"] for r in run.report["results"]}
    assert {op.split("::")[1] for op in ops} == {"my_add", "my_mul"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=pkg,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "my_add[ge-static]" in done.stdout and "my_mul[ge-static]" in done.stdout


def test_the_records_regenerate_the_package(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path / "a")
    into.add(NewRequest("my_mul", autograd=True), pkg)
    into.add(NewRequest("my_scale", schema="my_scale(Tensor x, float s) -> Tensor"), pkg)
    fresh = into.regenerate(pkg, tmp_path / "b")
    assert _tree(fresh) == _tree(pkg)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["new", "my_add"], "already has an op named my_add"),
        (["new", "myAdd"], "GE IR name MyAdd"),
        (["new", "tests"], "already exists"),
        (["new", "my_mul", "--force"], "--force does not apply"),
        (["new", "my_mul", "--style", "cpp"], "builds no C++"),
        (["new", "my_mul", "--inplace", "--autograd"], "--autograd"),
        (["new", "my_mul", "--out", "elsewhere"], "exclude each other"),
    ],
)
def test_bad_additions_exit_2_with_one_line_and_change_nothing(
    scaffolds, tmp_path, opsdk_cli, argv, needle
):
    pkg = _package(scaffolds, tmp_path)
    (pkg / "my_add" / "tests").mkdir()  # a module of the user's: never overwritten
    before = _tree(pkg)
    run = opsdk_cli(*argv, "--into", pkg)
    assert run.code == 2 and needle in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert _tree(pkg) == before
    assert sorted(p.name for p in pkg.iterdir()) == [
        "README.md",
        "my_add",
        "pyproject.toml",
        "tests",
    ]


def test_into_a_directory_that_is_no_op_package_is_refused(tmp_path, opsdk_cli):
    run = opsdk_cli("new", "my_mul", "--into", tmp_path)
    assert run.code == 2 and "[tool.opsdk]" not in run.stderr and "pyproject.toml" in run.stderr
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    run = opsdk_cli("new", "my_mul", "--into", tmp_path)
    assert run.code == 2 and "[tool.opsdk]" in run.stderr and run.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("report")) == [
        "pyproject.toml"
    ]


def test_a_cpp_op_joins_a_cpp_package(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path, style="cpp")
    run = opsdk_cli("new", "my_mul", "--style", "cpp", "--into", pkg)
    assert run.code == 0, run.stderr
    cpp = (pkg / "my_add" / "my_mul" / "my_mul.cpp").read_text()
    assert 'm.set_python_module("my_add.my_mul.fake");' in cpp
    run = opsdk_cli(
        "check", pkg, "--backend", "eager,opcheck", "--shapes", "static", json_report=True
    )
    assert run.code == 0, run.stdout + run.stderr
    assert len(run.report["results"]) == 4
