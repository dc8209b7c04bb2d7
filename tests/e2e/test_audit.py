"""``opsdk audit``'s suite (audit_suite.py), in a pytest process of its own.

Reading torch_npu's library defines its ``npu`` ops in the process (schemas, Meta
functions, the stand-in kernel), as the audit must; npugraph_ex's graph passes then see
those ops and capture other graphs differently, so the suite must not share a process
with the other tests (under xdist it would share a worker with some of them)."""

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).with_name("audit_suite.py")


@pytest.mark.slow
def test_the_audit_suite_passes_in_a_process_of_its_own():
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(SUITE)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=SUITE.parents[2])
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
