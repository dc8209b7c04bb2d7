"""Compiled cells skip Dynamo's guard-latency profiling, and still guard every call."""

import pytest
import torch
import torch._dynamo
import torch._dynamo.guards as guards
from torch._dynamo.testing import CompileCounter

from opsdk import harness, target
from opsdk.harness.lean import no_guard_profiling
from opsdk.scaffold import NewRequest, new


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
def test_compiled_cells_skip_guard_timing(tmp_path, timed, backend):
    project = new(NewRequest(f"lean_{backend}", namespace=f"lean_{backend}", out=tmp_path)).path
    [cell] = harness.cells(target.load(str(project)), [backend], ["static"])
    result = harness.run_cell(cell)
    assert result.status == "pass", result.describe()
    assert not timed
