"""Shared fixtures: scaffolded op packages, and the `opsdk` CLI run in a fresh process."""

import json
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


@pytest.fixture
def opsdk_cli(tmp_path):
    """Run `python -m opsdk ARGS`; with ``json=True`` also return the parsed report."""

    def run(*args, json_report: bool = False, timeout: float = 600) -> CliRun:
        argv = [sys.executable, "-m", "opsdk", *map(str, args)]
        report_path = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.json"
        if json_report:
            argv += ["--json", str(report_path)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
        report = (
            json.loads(report_path.read_text()) if json_report and report_path.exists() else None
        )
        return CliRun(done, report)

    return run


@pytest.fixture(scope="session")
def scaffolds(tmp_path_factory):
    """Op packages built once per (name, options) in this process: see tests/scaffolded.py."""
    from scaffolded import Scaffolds  # opsdk.scaffold loads only for tests that scaffold

    return Scaffolds(tmp_path_factory.mktemp("scaffolds"))
