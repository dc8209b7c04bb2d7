"""`opsdk check --isolate`: a kernel that segfaults, aborts or hangs costs only its op's cells.

One package holds three ops (a segfaulting, an aborting and a good one, in that
order, so the good one runs after two crashes); a fourth op hangs and is checked
on its own with a short --timeout. An op whose cells are all in the cell cache gets
its cached results without a process.
"""

import json
import re

import pytest

from opsdk import cli
from opsdk.harness.run import isolate
from opsdk.harness.run.cache import ENV_OFF
from opsdk.scaffold import NewRequest, into

NAMESPACE = "isolate_t"
KERNELS = {
    "my_segv": "import ctypes\n\n    ctypes.string_at(0)",
    "my_abort": "import os\n\n    os.abort()",
    "my_hang": "import time\n\n    time.sleep(600)",
    "my_ok": "return torch.add(x, y)",
}
SUITE = ("my_segv", "my_abort", "my_ok")


def _op(scaffolds, tmp_path, name):
    """A scaffolded add whose npu kernel runs ``KERNELS[name]`` instead."""
    pkg = scaffolds.copy(tmp_path, name, namespace=NAMESPACE)
    kernels = pkg / name / "kernels.py"
    npu_kernel = '"""The op on npu tensors."""\n    return torch.add(x, y)'
    text = kernels.read_text()
    assert npu_kernel in text
    kernels.write_text(
        text.replace(npu_kernel, f'"""The op on npu tensors."""\n    {KERNELS[name]}')
    )
    return pkg


def _suite(scaffolds, tmp_path):
    """A package whose OPS are those of the SUITE op packages beside it."""
    for name in SUITE:
        _op(scaffolds, tmp_path, name)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "__init__.py").write_text(
        "import importlib\nimport sys\nfrom pathlib import Path\n\n"
        f"NAMES = {SUITE!r}\n"
        "sys.path[:0] = [str(Path(__file__).parent.parent / n) for n in NAMES]\n"
        "OPS = tuple(op for n in NAMES for op in importlib.import_module(n).OPS)\n"
    )
    return suite


def test_crashing_kernels_are_their_ops_errors_and_the_other_op_still_runs(
    scaffolds, tmp_path, opsdk_cli
):
    run = opsdk_cli(
        "check",
        _suite(scaffolds, tmp_path),
        "--isolate",
        "--backend",
        "eager",
        "--shapes",
        "static",
        json_report=True,
    )
    assert run.code == 1 and run.report is not None, run.stdout + run.stderr
    for name, signal in (("my_segv", "SIGSEGV"), ("my_abort", "SIGABRT")):
        [cell] = run.cells(op=f"{NAMESPACE}::{name}")
        assert (cell["status"], cell["layer"]) == ("error", "process"), cell
        # how it died, and where: the frame of the op's kernel (faulthandler's stack)
        died = f"killed by {signal} in this cell at kernels.py:"
        assert died in cell["message"] and cell["message"].endswith(f"in {name}_npu"), cell
    [ok] = run.cells(op=f"{NAMESPACE}::my_ok")
    assert ok["status"] == "pass", ok
    # Progress: one line per op, ended by its outcome.
    line = re.compile(rf"\[(\d)/3\] {NAMESPACE}::(\w+) \[own process\] \.\.\. (.+) \(\d+\.\d\d s\)")
    progress = [line.fullmatch(text) for text in run.stdout.splitlines() if text[:1] == "["]
    assert [m.groups() if m else None for m in progress] == [
        ("1", "my_segv", "error in process"),
        ("2", "my_abort", "error in process"),
        ("3", "my_ok", "pass"),
    ], run.stdout


def test_a_hanging_kernel_times_out_as_its_ops_error(scaffolds, tmp_path, opsdk_cli):
    run = opsdk_cli(
        "check",
        _op(scaffolds, tmp_path, "my_hang"),
        "--isolate",
        "--timeout",
        "3",
        "--backend",
        "eager,npugraph_ex",
        "--shapes",
        "dynamic",
        "--options",
        "capture_limit",
        json_report=True,
    )
    assert run.code == 1, run.stdout + run.stderr
    # every cell of the op, its option profile's included, is the time limit's error:
    # the cell it ran past the limit in, and the cells it left
    cells = run.report["results"]
    assert [(c["column"], c["profile"]) for c in cells] == [
        ("eager", None),
        ("npugraph_ex", None),
        ("npugraph_ex", "capture_limit"),
    ], cells
    for cell in cells:
        assert (cell["status"], cell["layer"]) == ("error", "process"), cell
        assert "ran past the op's time limit of 3 s" in cell["message"], cell


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--timeout", "5"), "--timeout applies to --isolate"),
        (("--isolate", "--timeout", "0"), "not a positive number of seconds"),
        (("--only-op", "my_ok"), "declares no op named 'my_ok'"),
    ],
)
def test_bad_isolation_options_are_one_line_errors(scaffolds, tmp_path, opsdk_cli, args, needle):
    run = opsdk_cli("check", _op(scaffolds, tmp_path, "my_ok"), *args)
    assert run.code == 2, run.stdout + run.stderr
    assert needle in run.stderr.strip().splitlines()[-1], run.stderr


def test_an_op_whose_cells_are_all_cached_gets_no_process(scaffolds, tmp_path, monkeypatch):
    """Two ops, checked with --isolate three times (in this process, so the children are
    counted): the first run fills the cache, a rerun starts no child and serves the same
    outcomes from it, an edit of one op's kernel starts that op's child only. opcheck and
    aot_eager are in the run, so the parent looks the cells up as the children key them."""
    monkeypatch.delenv(ENV_OFF, raising=False)
    project = scaffolds.copy(tmp_path, "iso_first", namespace="isocache")
    into.add(NewRequest("iso_second", namespace="isocache"), project)
    started = []

    def check_in_child(target, cells, *args):
        started.append(cells[0].op.name)
        return real_check_in_child(target, cells, *args)

    real_check_in_child = isolate.check_in_child
    monkeypatch.setattr(isolate, "check_in_child", check_in_child)

    def check(name):
        started.clear()
        report = tmp_path / f"{name}.json"
        argv = ["check", str(project), "--isolate", "--backend", "eager,opcheck,aot_eager"]
        assert cli.main([*argv, "--shapes", "static", "--json", str(report)]) == 0
        results = json.loads(report.read_text())["results"]
        outcomes = [(r["op"], r["column"], r["shapes"], r["status"]) for r in results]
        return list(started), outcomes, {r["op"]: {r["cached"]} for r in results}

    first, second = "isocache::iso_first", "isocache::iso_second"
    children, filled, cached = check("fill")
    assert (
        children == [first, second]
        and len(filled) == 6
        and cached
        == {
            first: {False},
            second: {False},
        }
    )
    assert check("again") == ([], filled, {first: {True}, second: {True}})
    kernels = project / "iso_first" / "iso_second" / "kernels.py"
    kernels.write_text(kernels.read_text() + "\n# edited\n")
    assert check("edited") == ([second], filled, {first: {True}, second: {False}})
