"""The run journal and its watcher's rules, without a process: what a journal settles of a
run's cells, where a death is said to be, and which signals reach which child."""

import signal

import pytest

from opsdk._runtime import signals
from opsdk._runtime.spec import parse
from opsdk.harness.cell import Cell, OpUnderTest
from opsdk.harness.run import interrupts, journal, watch

OP = OpUnderTest(parse("jt::op(Tensor x) -> Tensor"), "jt")
CELLS = [Cell(OP, column, "static") for column in ("eager", "opcheck", "aot_eager", "ge")]


def _record(folder, *events):
    for event in events:
        journal.append(folder, event)
    return journal.read(folder)


def test_a_dead_processs_finished_cells_are_kept_and_the_cell_it_died_in_is_its_error(tmp_path):
    passed = CELLS[0].result("pass")
    record = _record(
        tmp_path,
        {"event": "began", "pid": 1},
        {"event": "start", "cell": CELLS[0].id, "op": OP.name, "time": 0.0},
        {"event": "result", "cell": CELLS[0].id, "result": passed.to_json()},
        {"event": "start", "cell": CELLS[1].id, "op": OP.name, "time": 1.0},
        {
            "event": "died",
            "cell": CELLS[1].id,
            "op": OP.name,
            "how": "was killed by SIGSEGV",
            "where": "kernels.py:3 in op_npu",
        },
    )
    done, left = journal.settled(record, CELLS)
    assert done[CELLS[0].id] == passed
    died = done[CELLS[1].id]
    assert (died.status, died.layer) == ("error", "process")
    assert (
        died.message
        == "the op's process was killed by SIGSEGV in this cell at kernels.py:3 in op_npu"
    )
    assert left == CELLS[2:]


def test_an_op_whose_process_died_three_times_gets_its_other_cells_as_errors(tmp_path):
    deaths = [
        {"event": "died", "cell": c.id, "op": OP.name, "how": "was killed by SIGABRT", "where": ""}
        for c in CELLS[: journal.DEATHS_PER_OP]
    ]
    done, left = journal.settled(_record(tmp_path, *deaths), CELLS)
    assert left == []
    rest = done[CELLS[-1].id]
    assert (rest.status, rest.layer) == ("error", "process")
    assert rest.message.startswith(f"not run: the op's process died {journal.DEATHS_PER_OP} times")
    first = done[CELLS[0].id]  # no Python frame: how to see the native one
    assert first.message.endswith("under gdb to see where"), first


def test_a_cell_a_second_signal_aborted_is_not_run(tmp_path):
    record = _record(tmp_path, {"event": "start", "cell": CELLS[0].id, "op": OP.name, "time": 0})
    done, left = journal.settled(record, CELLS)
    assert done[CELLS[0].id].status == "not run"
    assert done[CELLS[0].id].message == journal.ABORTED
    assert left == CELLS[1:]


def test_a_torn_last_line_is_left_for_later(tmp_path):
    follower = journal.Follower(tmp_path)
    journal.append(tmp_path, {"event": "began", "pid": 7})
    with open(tmp_path / "journal.jsonl", "a") as file:
        file.write('{"event": "done"')  # the process died writing it
    assert follower.poll().began_by == 7 and not follower.record.done
    with open(tmp_path / "journal.jsonl", "a") as file:
        file.write("}\n")
    assert follower.poll().done


def test_where_a_process_died_is_the_users_innermost_frame():
    stack = (
        "Fatal Python error: Segmentation fault\n\n"
        "Current thread 0x1 (most recent call first):\n"
        f'  File "{journal.__file__}", line 9 in harness\n'
        '  File "/home/me/pkg/my_op/kernels.py", line 12 in my_op_npu\n'
        '  File "/home/me/pkg/my_op/schema.py", line 40 in call\n'
    )
    assert journal.innermost(stack) == "kernels.py:12 in my_op_npu"
    assert journal.innermost("no frames here") == ""


class _Child:
    pid = 4242

    def __init__(self):
        self.sent = []

    def send_signal(self, signum):
        self.sent.append(signum)

    def kill(self):
        self.sent.append(signal.SIGKILL)


@pytest.mark.parametrize(
    ("began_by", "reporting", "sent"),
    [
        (4242, False, signal.SIGINT),  # running cells: the ladder's signal, as sent
        (None, False, signal.SIGKILL),  # still starting: ended, one that reports follows
        (4242, True, None),  # only reporting: left to finish
    ],
)
def test_a_signal_reaches_a_watched_child_as_its_state_allows(tmp_path, began_by, reporting, sent):
    if began_by is not None:
        journal.append(tmp_path, {"event": "began", "pid": began_by})
    child = _Child()
    watch._Signalled(child, tmp_path, reporting).send_signal(signal.SIGINT)
    assert child.sent == ([sent] if sent else [])


def test_a_library_cannot_take_sigint_while_a_run_holds_it():
    """As TorchAir's torchair.core._backend and npugraph_ex do at import."""
    theirs = lambda signum, frame: None  # noqa: E731
    with interrupts.Interrupts() as ladder:
        assert signal.signal(signal.SIGINT, theirs) == ladder._handle
        assert signal.getsignal(signal.SIGINT) == ladder._handle
        assert signal.getsignal(signal.SIGTERM) == ladder._handle
    assert signal.signal is signals.install  # the guard is gone with the run
    assert signal.getsignal(signal.SIGINT) is not theirs


def test_signals_held_while_the_command_started_are_the_runs():
    before = {s: signal.getsignal(s) for s in signals.KEPT}
    try:
        signals.hold()
        signal.raise_signal(signal.SIGTERM)  # counted, not the process's end
        with interrupts.Interrupts() as ladder:
            assert ladder.signals == [signal.SIGTERM] and ladder.requested
        assert signals.take_held() == []
    finally:
        for signum, handler in before.items():
            signals.install(signum, handler)
