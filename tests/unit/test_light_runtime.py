"""opsdk's base install is the light op runtime; the tools are the `tools` extra."""

import re
import sys

import pytest

from opsdk import _versions, cli

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_base_dependencies_are_the_light_runtime():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert [d.split(">")[0].split("=")[0] for d in project["dependencies"]] == ["torch"]
    tools = {re.split(r"[<>=;\[ ]", d)[0] for d in project["optional-dependencies"]["tools"]}
    wanted = (
        "cookiecutter",
        "jinja2",
        "ruff",
        "pytest",
        "pytest-xdist",
        "protobuf",
        "pyyaml",
        "pydot",
    )
    for dist in (*wanted, "numpy"):
        assert dist in tools, dist


@pytest.fixture
def base_install(monkeypatch):
    """As if opsdk were installed without its tools: their modules cannot be imported."""
    tops = {name.partition(".")[0] for name in _versions.TOOLS}
    for name in [*tops, *(m for m in list(sys.modules) if m.partition(".")[0] in tops)]:
        monkeypatch.setitem(sys.modules, name, None)


def test_doctor_runs_with_the_base_install_and_names_the_extra(
    base_install, monkeypatch, tmp_path, capsys
):
    """`opsdk doctor`, meant to diagnose an environment, exited 2 without the tools."""
    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path))
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("opsdk ") and "\ntorch " in out
    missing = ", ".join(_versions.TOOLS)
    assert f"\ntools        absent ({missing}): every command but doctor needs them: " in out
    assert "pip install 'opsdk[tools]'" in out


def test_without_the_tools_a_command_says_which_extra_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "cookiecutter", None)  # as if not installed
    assert cli.main(["new", "my_add", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "opsdk[tools]" in err and "cookiecutter" in err
    assert list(tmp_path.iterdir()) == []
