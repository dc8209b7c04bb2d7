"""Work the harness skips or does once because it proves nothing more: compiled cells
skip Dynamo's guard-latency profiling (and still guard every call), and the
mark_static opcheck cell reuses the static cell's outcomes."""

import ast
import subprocess
import sys
from dataclasses import replace

import pytest
import torch
import torch._dynamo
import torch._dynamo.guards as guards
from torch._dynamo.testing import CompileCounter

from opsdk import harness
from opsdk._runtime.patches import guard_profiling_skipped as no_guard_profiling
from opsdk.harness.columns import opcheck
from opsdk.harness.run import target
from opsdk.harness.variants.cases import cases


@pytest.fixture
def timed(monkeypatch):
    """Every call of Dynamo's guard-latency profiler."""
    calls = []
    monkeypatch.setattr(guards, "profile_guard_manager", lambda *args: calls.append(args) or 0.0)
    torch._dynamo.reset()
    yield calls
    torch._dynamo.reset()


def test_guards_are_checked_but_not_timed(timed):
    counter = CompileCounter()
    add_one = torch.compile(lambda x: x + 1, backend=counter, dynamic=False)
    with no_guard_profiling():
        add_one(torch.ones(2))
        add_one(torch.ones(2))
        add_one(torch.ones(3))  # a size guard fails: Dynamo compiles again
    assert counter.frame_count == 2 and not timed
    add_one(torch.ones(4))
    assert timed, "outside the context Dynamo times its guards again"


@pytest.mark.parametrize("backend", ["aot_eager", "ge", "npugraph_ex"])
def test_compiled_cells_skip_guard_timing(scaffolds, timed, backend):
    project = scaffolds.shared(f"lean_{backend}", namespace=f"lean_{backend}")
    [cell] = harness.cells(target.load(str(project)), [backend], ["static"])
    result = harness.run_cell(cell)
    assert result.status == "pass", result.describe()
    assert not timed


def test_mark_static_opcheck_reuses_the_static_outcomes(scaffolds, tmp_path, monkeypatch):
    """opcheck has no mark_static: that cell reads the static cell's outcomes for the
    same inputs, failures included, and runs opcheck itself when the inputs differ."""
    project = scaffolds.copy(tmp_path, "lean_opcheck", namespace="lean_opcheck")
    fake = project / "lean_opcheck" / "fake.py"
    assert "return meta.elementwise(x, y)" in fake.read_text()
    fake.write_text(fake.read_text().replace("return meta.elementwise(x, y)", "return x[:1]"))
    package = target.load(str(project))
    calls = []
    real = torch.library.opcheck
    monkeypatch.setattr(torch.library, "opcheck", lambda *a, **k: calls.append(a) or real(*a, **k))
    static, mark_static = harness.cells(package, ["opcheck"], ["static", "mark_static"])
    first = harness.run_cell(static)
    count = len(calls)
    second = harness.run_cell(mark_static)
    assert (first.status, first.layer) == (second.status, second.layer) == ("fail", "fake")
    assert first.message == second.message and len(calls) == count > 0

    def other_inputs(spec, shapes, column, **how):  # the calls in reverse: other first inputs
        return [replace(c, calls=c.calls[::-1]) for c in cases(spec, shapes, column, **how)]

    monkeypatch.setattr(opcheck, "cases", other_inputs)
    harness.run_cell(mark_static)
    assert len(calls) > count


def test_opcheck_leaves_aot_dispatch_to_aot_eager_in_the_same_run(scaffolds, monkeypatch):
    """opcheck's AOT dispatch tests trace what the aot_eager column traces: in a run with
    that column they are its job; opcheck run without it still runs them."""
    project = scaffolds.shared("lean_aot", namespace="lean_aot")
    package = target.load(str(project))
    seen = []
    real = torch.library.opcheck

    def recorded(*args, test_utils, **kwargs):
        seen.extend(test_utils)
        return real(*args, test_utils=test_utils, **kwargs)

    monkeypatch.setattr(torch.library, "opcheck", recorded)
    monkeypatch.setattr(opcheck, "_outcomes", {})
    results = harness.run_matrix(harness.cells(package, ["opcheck"], ["static", "dynamic"]))
    alone = set(seen)
    seen.clear()
    monkeypatch.setattr(opcheck, "_outcomes", {})
    pair = ["opcheck", "aot_eager"]
    results += harness.run_matrix(harness.cells(package, pair, ["static", "dynamic"]))
    assert all(r.status == "pass" for r in results), [r.describe() for r in results]
    assert {"test_aot_dispatch_static", "test_aot_dispatch_dynamic"} <= alone
    assert "test_faketensor" in seen
    assert not {u for u in seen if u.startswith("test_aot_dispatch")}, seen


def test_a_full_run_starts_its_eager_cells_without_dynamo(scaffolds):
    """Cold start: entering a run imports nothing; Dynamo (about 1 s) loads with the
    first cell that needs it, not before the first result."""
    project = scaffolds.shared("lean_cold", namespace="lean_cold")
    script = f"""
import sys
from opsdk import harness
from opsdk.harness.run import target
cells = harness.cells(target.load({str(project)!r}), harness.columns.names(), ["static"])
loaded = []
def note(cell):
    loaded.append((cell.column, "torch._dynamo" in sys.modules))
harness.run_matrix(cells, on_start=note)
print(loaded)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert loaded[0] == ("eager", False), loaded
    assert ("aot_eager", True) in loaded, "the compiled cells ran without Dynamo?"


def test_the_column_registry_and_the_cli_parser_load_without_torch():
    """`opsdk --help` and the pytest plugin read the column names: no torch for that."""
    script = (
        "import sys; from opsdk.cli import parser; from opsdk.harness import columns; "
        "parser(); columns.names(); assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
