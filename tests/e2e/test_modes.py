"""`--modes npugraph_ex`: a package made for npugraph_ex alone (the npugraph_ex guide's
"Meta only" path) has no converter and no IR, stays lint clean, records its modes, and
is checked without its ge cells."""

import subprocess
import sys

import pytest

from opsdk.axes import STYLES
from opsdk.scaffold import NewRequest, into, new

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ONLY = ("npugraph_ex",)


@pytest.mark.parametrize("style", STYLES)
def test_a_package_for_npugraph_ex_alone_has_no_converter_or_ir_and_is_lint_clean(tmp_path, style):
    path = new(NewRequest("my_np", style=style, modes=ONLY, out=tmp_path)).path
    assert not list(path.rglob("converter.py")) and not list(path.rglob("ir.py"))
    assert "load_converters" not in (path / "my_np" / "__init__.py").read_text()
    settings = tomllib.loads((path / "pyproject.toml").read_text())["tool"]
    assert settings["opsdk"]["modes"] == "npugraph_ex"
    assert "ge" not in settings["pytest"]["ini_options"]["opsdk_backends"]
    assert "opsdk check . --modes npugraph_ex " in (path / "README.md").read_text()
    for command in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command], cwd=path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_record_regenerates_the_modes(tmp_path):
    path = new(NewRequest("my_np", modes=ONLY, out=tmp_path / "a")).path
    into.add(NewRequest("my_two", modes=ONLY), path)
    fresh = into.regenerate(path, tmp_path / "b")
    assert not list(fresh.rglob("converter.py"))
    assert (fresh / "my_np" / "my_two" / "fake.py").is_file()


def test_check_with_modes_lays_out_no_ge_cell(tmp_path, opsdk_cli):
    path = new(NewRequest("my_np", namespace="modes_np", modes=ONLY, out=tmp_path)).path
    run = opsdk_cli(
        "check", path, "--modes", "npugraph_ex", "--backend", "eager,ge,npugraph_ex",
        "--shapes", "static", json_report=True,
    )  # fmt: skip
    assert run.code == 0, run.stdout + run.stderr
    assert [(r["backend"], r["status"]) for r in run.report["results"]] == [
        ("eager", "pass"),
        ("npugraph_ex", "pass"),
    ]
