"""The unit tier's guard (tests/unit/conftest.py): a test here that starts a process fails
at that call, saying where the test belongs, and code catching ``Exception`` cannot hide it."""

import multiprocessing
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "start",
    [
        lambda: subprocess.run([sys.executable, "-c", ""]),
        lambda: os.system("true"),
        lambda: os.posix_spawn("/bin/true", ["true"], {}),
        lambda: multiprocessing.get_context("spawn").Process(target=print).start(),
    ],
    ids=["subprocess", "system", "posix_spawn", "multiprocessing"],
)
def test_a_unit_test_that_starts_a_process_fails_and_is_told_to_move(start):
    with pytest.raises(pytest.fail.Exception, match=r"starts a process .*: move it to tests/e2e$"):
        try:
            start()
        except Exception:  # as code under test might
            pytest.fail("the guard's failure was an Exception: code could swallow it")
