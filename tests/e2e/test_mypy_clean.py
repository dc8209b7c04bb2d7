"""The packages held to their annotations (pyproject's ``[tool.mypy] files``) type-check
clean. mypy runs as a test of the test command `.ci/run` runs, beside the other tests
(run alone before them, it kept one of CI's two cores idle)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_typed_packages_type_check_clean():
    pytest.importorskip("mypy", reason="mypy comes with opsdk[dev]")
    done = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, f"mypy:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
