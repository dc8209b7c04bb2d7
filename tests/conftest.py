"""Shared fixtures: scaffolded op packages, the `opsdk` CLI run in a fresh process (or a
check of the example in this one), and a disk that fills up."""

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


class CliRun:
    def __init__(self, done: subprocess.CompletedProcess, report: dict | None):
        self.code = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr
        self.report = report

    def cells(self, **match) -> list[dict]:
        return [r for r in self.report["results"] if all(r[k] == v for k, v in match.items())]


def _cli_in(cwd: Path):
    def run(*args, json_report: bool = False, timeout: float = 600) -> CliRun:
        argv = [sys.executable, "-m", "opsdk", *map(str, args)]
        report_path = cwd / f"report-{len(list(cwd.glob('report-*')))}.json"
        if json_report:
            argv += ["--json", str(report_path)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        report = (
            json.loads(report_path.read_text()) if json_report and report_path.exists() else None
        )
        return CliRun(done, report)

    return run


@pytest.fixture(autouse=True)
def _no_cell_cache(monkeypatch):
    """Every test runs its cells (and writes no .opsdk_cache/ into shared packages); the
    cache's own tests turn it back on (``monkeypatch.delenv``)."""
    monkeypatch.setenv("OPSDK_NO_CACHE", "1")


@pytest.fixture(scope="session")
def dead_pid() -> int:
    """A process id no process has: above the kernel's largest (a finished child's pid,
    the other way to get one, needs a process started)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


@pytest.fixture
def opsdk_cli(tmp_path):
    """Run `python -m opsdk ARGS`; with ``json=True`` also return the parsed report."""
    return _cli_in(tmp_path)


@pytest.fixture(scope="module")
def opsdk_cli_module(tmp_path_factory):
    """``opsdk_cli`` for a module fixture whose one run several tests share."""
    return _cli_in(tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="session")
def scaffolds(tmp_path_factory):
    """Op packages built once per (name, options) in this process: see tests/scaffolded.py."""
    from scaffolded import Scaffolds  # opsdk.scaffold loads only for tests that scaffold

    return Scaffolds(tmp_path_factory.mktemp("scaffolds"))


@pytest.fixture(scope="session")
def build():
    """``build(body)``: the GraphDef of a decoded ModelDef whose graph ``body(ge, raw,
    Data, DataType)`` builds with TorchAir's own builders (the graph pictures' tests)."""
    from opsdk.offline.torchair import torchair_with_converters

    torchair_with_converters()
    from torchair import ge as torchair_ge
    from torchair._ge_concrete_graph import ge_apis as raw
    from torchair._ge_concrete_graph.ge_ir_pb2 import ModelDef
    from torchair.ge import DataType
    from torchair.ge._ge_graph import Data, GeGraph

    def make(body, name="g"):
        with GeGraph(name=name) as graph:
            body(torchair_ge, raw, Data, DataType)
        model = ModelDef()
        model.ParseFromString(graph.SerializeToString())
        return model.graph[0]

    return make


@pytest.fixture(scope="session")
def wheel():
    """torch_npu's library as the torch-npu wheel ships it (:mod:`opsdk.audit.torch_npu`),
    or a skip saying why the wheel cannot be had."""
    from opsdk._runtime import locator
    from opsdk.audit import torch_npu

    try:
        locator.torch_npu_file(torch_npu.SCHEMAS)
    except locator.TorchairUnavailable as err:
        pytest.skip(f"the torch-npu wheel cannot be fetched: {err}")
    return torch_npu


@pytest.fixture
def check_example():
    """`opsdk check` of the example add's one eager static cell in this process, with more
    ``flags``: its exit code (the first costs about 2 s, the next 0.1 s)."""
    from opsdk import cli

    example = REPO / "examples" / "custom_ops" / "my_add"

    def check(*flags: str) -> int:
        return cli.main(["check", str(example), "--backend", "eager", "--shapes", "static", *flags])

    return check


@pytest.fixture
def full_disk(tmp_path, monkeypatch):
    """A folder on a disk that fills up: each write to a file there takes half its bytes,
    down to the last one, which fails with ENOSPC (opsdk writes its outputs with os.write)."""
    folder = tmp_path / "full"
    folder.mkdir()
    real_write = os.write

    def write(fd, data):
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(f"{folder}{os.sep}"):
            return real_write(fd, data)
        if len(data) > 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write)
    return folder
