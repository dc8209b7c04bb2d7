"""The unit tier starts no process: a test that runs a compiler, the `opsdk` CLI, ruff, a
worker... (in its body or in a fixture it sets up) fails at that call and belongs in
tests/e2e, which is what keeps ``python -m pytest tests/unit`` fast."""

import contextlib
import multiprocessing.process
import multiprocessing.util
import os
import platform
import subprocess

import pytest

# Every way code starts a process: subprocess (run, Popen, check_output...), a fork,
# posix_spawn, os.system, and multiprocessing's starts (fork, spawn, forkserver).
_STARTS = [
    (subprocess.Popen, "_execute_child"),
    (os, "fork"),
    (os, "forkpty"),
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "system"),
    (multiprocessing.util, "spawnv_passfds"),
    (multiprocessing.process.BaseProcess, "start"),
]

# The standard library runs `uname -p` once per process for platform.platform() (which
# `opsdk doctor` and the reports' environment print): here, before any test.
platform.platform()


def _refuse(what: str):
    def refuse(*args, **kwargs):
        pytest.fail(f"a unit test starts a process ({what}): move it to tests/e2e", False)

    return refuse


@contextlib.contextmanager
def _no_process_starts():
    with pytest.MonkeyPatch.context() as mp:
        for owner, name in _STARTS:
            if hasattr(owner, name):
                where = f"{getattr(owner, '__module__', '')}.{owner.__name__}".lstrip(".")
                mp.setattr(owner, name, _refuse(f"{where}.{name}"))
        yield


# Each phase, so that a module or session fixture set up for a unit test is held too.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _no_process_starts():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _no_process_starts():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item):
    with _no_process_starts():
        return (yield)
