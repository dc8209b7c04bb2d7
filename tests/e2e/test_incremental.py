"""Incremental and sharded checking, end to end: `opsdk check` processes sharing a cell cache,
the guide's CI recipe run locally (N=3) against an unsharded run, and pytest's plugin on
the same cache.

The packages are libraries of added ops (`opsdk new --into`), and the runs keep to the
columns that need no TorchAir (the cache and the shards treat every column alike), so
each process stays short.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scaffolded import edit

from opsdk.harness.run.cache import DIR_NAME, ENV_OFF
from opsdk.scaffold import NewRequest, into

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "incremental.md"
BACKENDS = "eager,opcheck,aot_eager"


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch):
    monkeypatch.delenv(ENV_OFF, raising=False)


def _library(scaffolds, out: Path, *added: str) -> Path:
    """An op project: my_add, and each of ``added`` as an op `opsdk new --into` added."""
    project = scaffolds.copy(out, "my_add", namespace="inc")
    for name in added:
        into.add(NewRequest(name, namespace="inc"), project)
    return project


def _break(op_dir: Path) -> None:
    """The op's npu kernel subtracts: its eager, opcheck and compiled cells fail."""
    edit(op_dir / "kernels.py", "return torch.add(x, y).contiguous()", "return torch.sub(x, y)")


def _check(project: Path, *args, cwd=None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "opsdk", "check", str(project), "--backend", BACKENDS, *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)


def _outcomes(report: dict) -> list[tuple]:
    """What a run found, cell by cell, without how (seconds, cached)."""
    return [(r["op"], r["column"], r["shapes"], r["status"], r["layer"]) for r in report["results"]]


def test_reruns_run_what_changed_and_concurrent_runs_share_the_cache(scaffolds, tmp_path):
    project = _library(scaffolds, tmp_path, "my_mul")
    a, b = (
        subprocess.Popen(
            [sys.executable, "-m", "opsdk", "check", str(project), "--backend", BACKENDS],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    )
    for run in (a, b):
        out, _ = run.communicate(timeout=600)
        assert run.returncode == 0, out
    again = _check(project, "--json", tmp_path / "again.json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "18 pass (18 cached)" in again.stdout
    assert all(r["cached"] for r in json.loads((tmp_path / "again.json").read_text())["results"])

    # Break the added op's kernel: its cells run (and fail), my_add's stay cached.
    _break(project / "my_add" / "my_mul")
    broken = _check(project, "--json", tmp_path / "broken.json")
    assert broken.returncode == 1
    results = json.loads((tmp_path / "broken.json").read_text())["results"]
    assert {r["op"] for r in results if not r["cached"]} == {"inc::my_mul"}
    assert {r["status"] for r in results if r["op"] == "inc::my_mul"} == {"fail"}

    last = _check(project, "--last-failed")
    assert last.returncode == 1
    assert "running the 9 cell(s) that failed last time" in last.stdout
    assert "9 fail" in last.stdout and "cached" not in last.stdout.split("\n")[-2]
    fresh = _check(project, "--no-cache")
    assert "(cached)" not in fresh.stdout and "9 pass, 9 fail" in fresh.stdout


def _recipe() -> dict:
    """The GitHub Actions workflow of the guide's sharding section."""
    text = GUIDE.read_text()
    section = text[text.index("## Sharding across CI machines") :]
    return yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))


def _run_job(job: dict, workspace: Path, shared: dict, shard: int | None = None) -> None:
    """The job's steps in ``workspace``: its `opsdk` commands run, its actions stood in for
    (the cache and the artifacts live in ``shared``), the rest (checkout, setup-python,
    pip install) is what the test environment is already."""
    for step in job["steps"]:
        action = step.get("uses", "").split("@")[0]
        if "run" in step and step["run"].startswith("opsdk "):
            command = step["run"].replace("${{ matrix.shard }}", str(shard))
            if command.startswith("opsdk check "):
                command += f" --backend {BACKENDS}"
            done = subprocess.run(
                [sys.executable, "-m", "opsdk", *command.split()[1:]],
                cwd=workspace,
                capture_output=True,
                text=True,
                timeout=600,
            )
            shared.setdefault("codes", []).append(done.returncode)
            shared.setdefault("logs", []).append(done.stdout + done.stderr)
        elif action == "actions/cache/restore" and "cache" in shared:
            shutil.copytree(shared["cache"], workspace / DIR_NAME)
        elif action == "actions/upload-artifact":
            artifact = shared["artifacts"] / str(shard)
            artifact.mkdir(parents=True)
            for name in step["with"]["path"].replace("${{ matrix.shard }}", str(shard)).split():
                source = workspace / name
                if source.is_dir():
                    shutil.copytree(source, artifact / source.name)
                else:
                    shutil.copy(source, artifact)
        elif action == "actions/download-artifact":
            for artifact in sorted(shared["artifacts"].iterdir()):
                shutil.copytree(artifact, workspace, dirs_exist_ok=True)
        elif action == "actions/cache/save":
            shutil.rmtree(shared.get("cache", workspace / "none"), ignore_errors=True)
            shared["cache"] = shutil.copytree(workspace / DIR_NAME, shared["root"] / "saved")


def test_the_guides_ci_recipe_merges_three_shards_into_the_unsharded_run(scaffolds, tmp_path):
    project = _library(scaffolds, tmp_path / "repo", "my_mul", "my_sub")
    _break(project / "my_add" / "my_sub")
    unsharded = _check(project, "--no-cache", "--json", tmp_path / "unsharded.json")
    assert unsharded.returncode == 1, unsharded.stdout + unsharded.stderr
    expected = _outcomes(json.loads((tmp_path / "unsharded.json").read_text()))

    workflow = _recipe()
    shards = workflow["jobs"]["check"]["strategy"]["matrix"]["shard"]
    assert shards == [1, 2, 3]
    shared = {"root": tmp_path}
    for round_ in ("cold", "warm"):  # the second run restores the cache the first saved
        shared["artifacts"] = tmp_path / round_ / "artifacts"
        shared["codes"], shared["logs"] = [], []
        for shard in shards:
            workspace = shutil.copytree(project, tmp_path / round_ / f"shard-{shard}")
            _run_job(workflow["jobs"]["check"], workspace, shared, shard)
        merge_workspace = shutil.copytree(project, tmp_path / round_ / "merge")
        _run_job(workflow["jobs"]["merge"], merge_workspace, shared)
        logs = "\n".join(shared["logs"])
        assert shared["codes"][-1] == 1, logs  # the merged verdict: my_sub fails
        merged = subprocess.run(
            [sys.executable, "-m", "opsdk", "report", "merge", "--json", "merged.json"]
            + [f"shard-{s}.json" for s in shards],
            cwd=merge_workspace,
            capture_output=True,
            text=True,
        )
        assert merged.returncode == 1, merged.stderr
        assert _outcomes(json.loads((merge_workspace / "merged.json").read_text())) == expected
        assert (merge_workspace / "opsdk.md").is_file() and (
            merge_workspace / "opsdk.html"
        ).is_file()
        each = [json.loads((merge_workspace / f"shard-{s}.json").read_text()) for s in shards]
        assert sorted(len({r["op"] for r in report["results"]}) for report in each) == [1, 1, 1]
    assert all(r["cached"] for report in each for r in report["results"]), "warm run reran"


def _pytest(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "opsdk_columns=eager"]
        + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_pytest_uses_the_same_cache_and_keeps_an_ops_cells_on_one_worker(scaffolds, tmp_path):
    project = _library(scaffolds, tmp_path, "my_mul")
    (project / "tests" / "test_my_add.py").unlink()  # the cells alone, which the cache serves
    first = _pytest(project, "-v")
    assert first.returncode == 0 and "(cached)" not in first.stdout, first.stdout
    again = _pytest(project, "-v")
    assert again.stdout.count("PASSED (cached)") == 6, again.stdout
    forced = _pytest(project, "-v", "--opsdk-no-cache")
    assert "(cached)" not in forced.stdout and "6 passed" in forced.stdout
    grouped = _pytest(project, "-v", "--opsdk-no-cache", "-n", "2", "--dist", "loadgroup")
    assert grouped.returncode == 0, grouped.stdout + grouped.stderr
    workers = {}
    for worker, cell in re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", grouped.stdout):
        workers.setdefault(cell.split("[")[0], set()).add(worker)
    assert set(workers) == {"inc::my_add", "inc::my_mul"}
    assert all(len(w) == 1 for w in workers.values()), workers
    shard = _pytest(project, "-v", "--opsdk-shard", "2/2")
    assert "3 passed, 3 deselected" in shard.stdout, shard.stdout
