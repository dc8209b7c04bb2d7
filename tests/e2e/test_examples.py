"""The committed examples are exactly what `opsdk new` generates today, and they pass."""

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from opsdk.axes import STYLES
from opsdk.scaffold import into

EXAMPLES = sorted(
    p.parent
    for p in (Path(__file__).parents[2] / "examples" / "custom_ops").glob("*/pyproject.toml")
)


# Tool caches that running the example's tools leaves behind; git ignores them too.
_CACHES = {"__pycache__", ".ruff_cache", ".pytest_cache", ".opsdk_cache"}


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text()
        for p in root.rglob("*")
        if p.is_file() and not _CACHES.intersection(p.parts)
    }


def test_there_are_inplace_out_of_place_and_training_examples_and_one_of_each_style():
    settings = [
        tomllib.loads((e / "pyproject.toml").read_text())["tool"]["opsdk"] for e in EXAMPLES
    ]
    kinds = {("(a!)" in s["schema"], s["style"]) for s in settings}
    assert {inplace for inplace, _ in kinds} == {True, False}
    assert {style for _, style in kinds} == set(STYLES)
    assert any(s.get("autograd") for s in settings), "no training (--autograd) example"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_is_what_the_generator_writes(example, tmp_path):
    fresh = into.regenerate(example, tmp_path)
    assert _files(fresh) == _files(example), f"regenerate {example.name} with opsdk new"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_passes_its_matrix(example, opsdk_cli):
    run = opsdk_cli("check", example, json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    # every default context included; only Dynamo's static buffers skip buffer-dynamic
    skipped = {(r["context"], r["shapes"]) for r in run.report["results"] if r["status"] == "skip"}
    assert skipped <= {("buffer", "dynamic")}
    assert run.report["results"] and all(
        r["status"] == "pass" for r in run.report["results"] if r["status"] != "skip"
    )


def test_generated_package_runs_its_own_tests(opsdk_cli, tmp_path):
    import subprocess
    import sys

    example = next(e for e in EXAMPLES if e.name == "my_inplace_add")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=example,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # its first test; 15 cells alone, 9 in view and 9 in buffer, whose 3 dynamic ones skip
    assert "31 passed, 3 skipped" in done.stdout


def test_backends_run_in_any_order_in_one_process(opsdk_cli):
    """npugraph_ex before ge: both patch torch once at first use, and must not clash."""
    example = next(e for e in EXAMPLES if e.name == "my_add")
    run = opsdk_cli(
        "check", example, "--backend", "npugraph_ex,ge", "--shapes", "static", json_report=True
    )
    assert run.code == 0, run.stdout + run.stderr
    assert [r["column"] for r in run.report["results"]] == ["npugraph_ex", "ge"]
