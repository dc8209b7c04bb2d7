"""`--modes npugraph_ex`: a package made for npugraph_ex alone (the npugraph_ex guide's
"Meta only" path) has no converter and no IR, stays lint clean, records its modes, and
is checked without its ge cells; an attached op gets no GE op type made up for it."""

import re
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
    assert 'MODES = ("npugraph_ex",)' in (path / "my_np" / "__init__.py").read_text()
    settings = tomllib.loads((path / "pyproject.toml").read_text())["tool"]
    assert settings["opsdk"]["modes"] == "npugraph_ex"
    assert "no ge or fusion" in (path / "README.md").read_text()
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


def test_an_attached_op_is_made_for_npugraph_ex_and_checked_without_ge(tmp_path, opsdk_cli):
    """Its GE op type is its library's: opsdk makes none up (NpuGemmaRmsNorm) whose ge
    cells would pass for a library with no GE path."""
    made = opsdk_cli(
        "new", "--attach", "modes_np::my_np", "--schema", "my_np(Tensor x, Tensor y) -> Tensor",
        "--out", tmp_path,
    )  # fmt: skip
    assert made.code == 0, made.stderr
    assert "made for npugraph_ex (no converter, no IR)" in made.stdout
    path = tmp_path / "my_np"
    assert not list(path.rglob("ir.py"))
    for name in ("kernels.py", "fake.py"):  # the skeletons, filled
        module = path / "my_np" / name
        module.write_text(re.sub(r"raise ImplementMe\([^)]*\)", "return x + y", module.read_text()))
    run = opsdk_cli(
        "check", path, "--backend", "eager,ge,npugraph_ex", "--shapes", "static", json_report=True
    )
    assert run.code == 0, run.stdout + run.stderr
    assert [(r["column"], r["status"]) for r in run.report["results"]] == [
        ("eager", "pass"),
        ("npugraph_ex", "pass"),
    ]
