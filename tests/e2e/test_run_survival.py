"""A run survives what happens to it (issue 37): signals at any moment, and kernels that
crash, hang or exhaust memory in a plain run, each costing one cell; --isolate keeps a
dead child's finished cells; an `opsdk/` folder in the working directory shadows nothing.

Every run here is the real `opsdk` command in a subprocess, watched as users run it.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

NAMESPACE = "survive_t"
# Columns that import TorchAir and npugraph_ex in their first cell (their handlers' window).
CHECK = ("--backend", "eager,ge,npugraph_ex", "--shapes", "static,dynamic")
CELLS = 6
# A kernel that misbehaves once: on its first call in a run whose marker file is missing
# (the marker is made first, so the process started after it runs the kernel plainly).
MARKED = (
    "import os\n\n    marker = os.environ['SURVIVE_MARKER'] + '.{name}'\n"
    "    if not os.path.exists(marker):\n        open(marker, 'w').close()\n        {act}\n"
)
ONCE = {
    "my_segv": "import ctypes; ctypes.string_at(0)",
    "my_hang": "import time; time.sleep(600)",
    "my_oom": "raise MemoryError",
}


def _opsdk(args, cwd, env=None, **popen):
    argv = [sys.executable, "-m", "opsdk", *map(str, args)]
    environment = {**os.environ, **(env or {})}
    return subprocess.Popen(argv, cwd=cwd, env=environment, **popen)


@pytest.fixture(scope="module")
def plain_add(scaffolds, tmp_path_factory):
    """An add whose npu kernel takes 30 ms a call: a cell lasts long enough for a signal
    sent after it started to land in it, the last cell's included."""
    from scaffolded import edit

    pkg = scaffolds.copy(tmp_path_factory.mktemp("survive"), "my_add", namespace=NAMESPACE)
    body = '"""The op on npu tensors."""\n'
    edit(pkg / "my_add" / "kernels.py", body, body + "    __import__('time').sleep(0.03)\n")
    return pkg


def _started(n):
    """Once the n-th cell's progress line is out."""
    return lambda out: f"[{n}/{CELLS}] " in out


# (when, signals): `when` is seconds after the start, or a progress condition then a delay.
MOMENTS = [
    (0.2, ["SIGINT"]),
    (0.4, ["SIGTERM"]),
    (0.8, ["SIGINT", "SIGINT"]),
    (1.5, ["SIGTERM", "SIGINT"]),
    (3.0, ["SIGINT"]),
    ((_started(1), 0.0), ["SIGINT"]),
    ((_started(1), 0.05), ["SIGTERM", "SIGTERM"]),
    ((_started(3), 0.0), ["SIGINT"]),  # the first ge cell: TorchAir imported in it
    ((_started(3), 0.2), ["SIGTERM"]),
    ((_started(3), 0.5), ["SIGINT", "SIGINT"]),
    ((_started(3), 0.8), ["SIGINT"]),
    ((_started(4), 0.0), ["SIGTERM", "SIGINT"]),
    ((_started(5), 0.0), ["SIGINT"]),  # the first npugraph_ex cell: npugraph_ex imported
    ((_started(5), 0.3), ["SIGINT", "SIGINT"]),
    ((_started(5), 0.2), ["SIGTERM"]),
    ((_started(6), 0.0), ["SIGINT"]),
]


# A fixed subset, one moment of each phase (start, a double signal, the first cell, TorchAir's
# and npugraph_ex's imports, a cell between, the last cell); `python bench/signal_sweep.py`
# runs every moment (OPSDK_SIGNAL_SWEEP=all).
FIXED = (0, 2, 6, 7, 11, 13, 15)
SWEPT = MOMENTS if os.environ.get("OPSDK_SIGNAL_SWEEP") == "all" else [MOMENTS[i] for i in FIXED]


@pytest.mark.parametrize(("when", "signals"), SWEPT)
def test_a_signal_at_any_moment_ends_with_130_and_a_report(plain_add, tmp_path, when, signals):
    report = tmp_path / "r.json"
    child = _opsdk(
        ["check", plain_add, *CHECK, "--json", report],
        tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = b""
    if isinstance(when, tuple):
        condition, delay = when
        os.set_blocking(child.stdout.fileno(), False)
        deadline = time.monotonic() + 300
        while not condition(seen.decode()) and child.poll() is None:
            assert time.monotonic() < deadline, seen.decode()
            seen += child.stdout.read() or b""
            time.sleep(0.01)
        time.sleep(delay)
    else:
        time.sleep(when)
    assert child.poll() is None, "the run ended before the signal: choose an earlier moment"
    for name in signals:
        child.send_signal(getattr(signal, name))
        time.sleep(0.3)
    stdout, stderr = child.communicate(timeout=300)
    stdout, stderr = (seen + stdout).decode(), stderr.decode()
    assert child.returncode == 130, stdout + stderr
    for crash in ("Fatal Python error", "Traceback", "Segmentation fault"):
        assert crash not in stderr, stderr
    results = json.loads(report.read_text())["results"]
    assert len(results) == CELLS, results
    assert {r["status"] for r in results} <= {"pass", "not run"}, results


@pytest.fixture(scope="module")
def misbehaving(scaffolds, tmp_path_factory):
    """One package per kernel of ONCE and a good op, behind a suite module listing all."""
    from scaffolded import edit

    root = tmp_path_factory.mktemp("misbehaving")
    names = [*ONCE, "my_fine"]
    for name in names:
        pkg = scaffolds.copy(root, name, namespace=NAMESPACE)
        if name in ONCE:
            body = '"""The op on npu tensors."""\n'
            act = MARKED.format(name=name, act=ONCE[name])
            edit(pkg / name / "kernels.py", body, body + "    " + act)
    suite = root / "suite"
    suite.mkdir()
    (suite / "__init__.py").write_text(
        "import importlib\nimport sys\nfrom pathlib import Path\n\n"
        f"NAMES = {names!r}\n"
        "sys.path[:0] = [str(Path(__file__).parent.parent / n) for n in NAMES]\n"
        "OPS = tuple(op for n in NAMES for op in importlib.import_module(n).OPS)\n"
    )
    return suite


def test_a_crash_a_hang_and_a_memory_error_each_cost_one_cell(misbehaving, tmp_path):
    """In a plain run, each misbehaving kernel's first cell is its error in layer process,
    saying how the process died and where in the kernel; its other cells, and the good
    op's, pass in the process started after it (--isolate's deaths: test_isolate.py)."""
    report = tmp_path / "r.json"
    args = ["check", misbehaving, "--backend", "eager,opcheck", "--shapes", "static,dynamic"]
    args += ["--cell-timeout", "10", "--json", report]
    run = _opsdk(args, tmp_path, {"SURVIVE_MARKER": str(tmp_path / "m")}, stdout=subprocess.PIPE)
    stdout, _ = run.communicate(timeout=600)
    assert run.returncode == 1, stdout
    results = json.loads(report.read_text())["results"]
    hows = {
        "my_segv": "was killed by SIGSEGV",
        "my_hang": "ran past the cell time limit of 10 s (--cell-timeout)",
        "my_oom": "ran out of memory (MemoryError)",
    }
    for name, how in hows.items():
        first, *rest = [r for r in results if r["op"] == f"{NAMESPACE}::{name}"]
        assert (first["column"], first["shapes"]) == ("eager", "static"), first
        assert (first["status"], first["layer"]) == ("error", "process"), first
        assert first["message"].startswith(f"the op's process {how} in this cell at kernels.py:")
        assert first["message"].endswith(f"in {name}_npu"), first
        assert [r["status"] for r in rest] == ["pass"] * 3, rest
    assert {r["status"] for r in results if r["op"].endswith("my_fine")} == {"pass"}


def test_an_opsdk_folder_in_the_working_directory_shadows_nothing(plain_add, tmp_path):
    """The `opsdk` script (whose own import ignores the working directory) starts its
    children, a plain run's and --isolate's, with its own import path, not `-m opsdk`."""
    (tmp_path / "opsdk").mkdir()  # what `python -m opsdk` in this folder would import
    script = Path(sys.executable).parent / "opsdk"
    report = tmp_path / "r.json"
    for isolate in ([], ["--isolate"]):
        args = ["check", plain_add, "--backend", "eager", "--shapes", "static", *isolate]
        run = subprocess.run(
            [script, *map(str, args), "--json", report],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert [r["status"] for r in json.loads(report.read_text())["results"]] == ["pass"]
