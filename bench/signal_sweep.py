"""Every signal moment of tests/e2e/test_run_survival.py (issue 37), not only the fixed
subset the suite runs: a signal at each phase of a run ends it with 130 and a report.

    python bench/signal_sweep.py [PYTEST ARGS...]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    test = REPO / "tests" / "e2e" / "test_run_survival.py"
    argv = [sys.executable, "-m", "pytest", "-q", str(test), "-k", "signal", *argv]
    return subprocess.call(argv, cwd=REPO, env={**os.environ, "OPSDK_SIGNAL_SWEEP": "all"})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
