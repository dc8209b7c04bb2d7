"""Task groups on the emulated device (#31): a launch captured as a task group, relaunched
with new host values by a task update, and a replay that waits on an external event
until the update records it, as npugraph_ex's update path uses them on a device."""

import pytest
import torch

from opsdk._runtime.npu import capture, emulator, streams
from opsdk._runtime.npu.capture import NpuGraphError

emulator.install()

_LIB = torch.library.Library("t_task_groups", "FRAGMENT")
_LIB.define("scale.out(Tensor x, SymInt[] lens, *, Tensor(a!) out) -> Tensor(a!)")
_LIB.impl(
    "scale.out",
    lambda x, lens, out: torch.mul(x, float(sum(lens)), out=out),  # lens: a host tiling
    "PrivateUse1",
)
SCALE_OUT = torch.ops.t_task_groups.scale.out


def _on(stream):
    streams.set_stream(stream.stream_id, 0, streams.DEVICE_TYPE)


@pytest.fixture
def graph():
    """A graph as npugraph_ex captures an updated op: wait on an external event, reset
    it, the op's launch as a task group, then work that reads its output."""
    x, out = torch.ones(3, device="npu"), torch.empty(3, device="npu")
    event = streams._NPUEventBase(graph_external=True)
    side, default = streams._NPUStreamBase(), streams.get_current_stream()[0]
    graph = capture.NPUGraphBase()
    _on(side)
    try:
        graph.capture_begin()
        event.wait(side)
        event.reset(side)
        capture.task_group_begin(side)
        SCALE_OUT(x, [2], out=out)
        handle = capture.task_group_end(side)
        after = out * 10
        graph.capture_end()
    finally:
        streams.set_stream(default, 0, streams.DEVICE_TYPE)
    return graph, handle, event, after, out


def _update(handle, lens, out):
    update = streams._NPUStreamBase()
    capture.task_update_begin(update, handle)
    SCALE_OUT(torch.ones(3, device="npu"), lens, out=out)  # recorded, not run
    capture.task_update_end(update)
    return update


def test_a_replay_waits_at_the_group_until_the_event_is_recorded(graph):
    g, _, event, after, _ = graph
    after.fill_(-1.0)  # capture allocates without writing: a marker of "not run yet"
    assert g.recorded_ops == [
        "external event wait",
        "external event reset",
        ["aten.mul.out"],
        "aten.mul.Tensor",
    ]
    g.replay()
    assert torch.equal(after.cpu(), torch.full((3,), -1.0)), "ran past the wait"
    event.record(streams._NPUStreamBase())
    assert torch.equal(after.cpu(), torch.full((3,), 20.0))  # the captured lens [2]


def test_an_update_relaunches_the_group_with_new_host_values_for_this_and_later_replays(graph):
    g, handle, event, after, out = graph
    after.fill_(-1.0)
    g.replay()
    update = _update(handle, [5], out)
    assert torch.equal(after.cpu(), torch.full((3,), -1.0)), "the update ran, not recorded"
    event.record(update)  # what npugraph_ex records after the update
    assert torch.equal(after.cpu(), torch.full((3,), 50.0))
    g.replay()
    event.record(update)
    assert torch.equal(after.cpu(), torch.full((3,), 50.0))  # updated in place, it stays


def test_task_group_calls_out_of_order_are_refused(graph):
    g, handle, *_ = graph
    side = streams._NPUStreamBase()
    with pytest.raises(NpuGraphError, match="outside a graph capture"):
        capture.task_group_begin(side)
    with pytest.raises(NpuGraphError, match="without graph_task_update_begin"):
        capture.task_update_end(side)
    with pytest.raises(NpuGraphError, match="no task group handle"):
        capture.task_update_begin(side, object())
