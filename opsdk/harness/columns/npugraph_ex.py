"""Column ``npugraph_ex``: capture once, replay many, and stay equal to eager.

The op runs under the real npugraph_ex backend, ``backend="npugraph_ex"`` as
torch_npu registers it (on an NPU host torch_npu's own; offline the wheel's
Python over opsdk's native stand-ins). Inputs live in the
same buffers across calls and are refilled with fresh values, as a serving loop
does, so the second and later calls of a shape are replays. When a call goes
wrong, the seed guide's diagnosis ladder runs automatically: ``aot_eager``,
then npugraph_ex with ``force_eager``, then with ``force_recapture``, and the
failure is reported in the layer the ladder points at.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from dataclasses import dataclass
from types import FrameType

import torch
import torch._dynamo

from opsdk._runtime import patches
from opsdk._runtime.npu import capture
from opsdk.errors import SetupError
from opsdk.harness import graph_hook, notes
from opsdk.harness.cell import Cell, CellFailure
from opsdk.harness.core import npugraph_backend, shared_trace
from opsdk.harness.core.compare import assert_same_call
from opsdk.harness.core.compiled import recompiled
from opsdk.harness.core.host_values import (
    Ledger,
    RecaptureWarning,
    stale,
    taken,
    updated_params,
)
from opsdk.harness.core.kernel import checked_kernel
from opsdk.harness.core.usage import Usage, usages
from opsdk.harness.failures import as_failure
from opsdk.harness.variants import profiles
from opsdk.harness.variants.cases import Call, Case, cases, mark_static, on_device, tensors_of

REPLAYS = 3
# Per shape mode: the size step of each call of a case (see opsdk.harness.variants.cases).
# Each shape is captured once and replayed; dynamic mode changes shape once, which
# must recapture.
STEPS = {
    "static": (0,) * (1 + REPLAYS),
    "mark_static": (0,) * (1 + REPLAYS),
    "dynamic": (0,) * (1 + REPLAYS) + (1,) * 2,
}
# The call from which host arguments take new values: a capture and a plain replay first.
VARY_FROM = 2


@dataclass
class _Counts:
    captures: int = 0
    replays: int = 0
    eager: int = 0  # calls npugraph_ex neither captured nor replayed: past capture_limit
    ledger: Ledger | None = None  # per shape, the host values and their captures


@contextlib.contextmanager
def counting_graphs():
    """Count captures and replays of ``torch.npu.NPUGraph`` (real or stand-in)."""
    cls = torch.npu.NPUGraph
    counts = _Counts()
    capture_begin, replay = cls.capture_begin, cls.replay

    def counted_capture_begin(self, *args, **kwargs):
        if not _sets_up_the_pool():
            counts.captures += 1
        return capture_begin(self, *args, **kwargs)

    def counted_replay(self, *args, **kwargs):
        counts.replays += 1
        return replay(self, *args, **kwargs)

    cls.capture_begin, cls.replay = counted_capture_begin, counted_replay
    try:
        yield counts
    finally:
        cls.capture_begin, cls.replay = capture_begin, replay


def _sets_up_the_pool() -> bool:
    """Whether the capture beginning is npugraph_ex's empty one, made once per compiled
    graph to set up its memory pool ("the initialization of mem pool requires an explicit
    call to capture"), not a capture of the graph: counted, it would stand in for a shape
    that fell back to eager. Its nearest npugraph_ex frame is ``AclGraph.compile``, a
    graph's is ``AclGraph.capture``; any other stack counts. Checked against torch-npu
    2.13.0."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.replace("\\", "/").endswith(_ACL_GRAPH):
            return frame.f_code.co_name == "compile"
        frame = frame.f_back
    return False


# The module of npugraph_ex's ACL graph, whose ``compile`` sets up the memory pool.
_ACL_GRAPH = "npugraph_ex/_acl_concrete_graph/acl_graph.py"


def lowering(spec):
    return npugraph_backend.backend(), contextlib.nullcontext


def _cell_backend(cell: Cell, **options):
    """The backend with the options of the cell's profile (:mod:`.profiles`), and ``options``."""
    return npugraph_backend.backend(**_profile_options(cell), **options)


def _profile_options(cell: Cell) -> dict:
    return profiles.options(cell.profile, "npugraph_ex")


def _refill(buffers, values):
    """``values`` with every tensor copied into the matching npu buffer (same
    address, so npugraph_ex replays) and every other argument taken as given."""
    if isinstance(values, torch.Tensor):
        return buffers.copy_(values)
    if isinstance(values, (list, tuple)):
        return type(values)(_refill(b, v) for b, v in zip(buffers, values, strict=True))
    return values


def refilled(buffers: Call, fresh: Call) -> Call:
    """``fresh``'s values in the npu ``buffers`` of the same shapes (same addresses, so
    npugraph_ex replays)."""
    return Call(
        _refill(buffers.args, fresh.args),
        {k: _refill(buffers.kwargs[k], v) for k, v in fresh.kwargs.items()},
    )


def _cases(cell: Cell) -> list[Case]:
    """The op's cases, shaped by STEPS; from the third call on, each also changes the
    host arguments the graph takes as inputs (a captured graph must neither recapture
    per value nor replay a stale one: :mod:`opsdk.harness.core.host_values`)."""
    steps = STEPS[cell.shapes]
    return cases(cell.op.spec, cell.shapes, cell.column, steps=steps, vary_from=VARY_FROM)


def shapes_of(call: Call) -> tuple:
    return tuple(tuple(t.shape) for t in tensors_of([call.args, call.kwargs]))


def _compiled(cell: Cell, use: Usage, backend):
    """A fresh torch.compile of the usage's function through ``backend``."""
    torch._dynamo.reset()
    return use.compile(backend, cell.shapes)


def replay_loop(cell: Cell, use: Usage, fn) -> _Counts:
    """Run the usage's case through the compiled ``fn``; raise CellFailure on the first
    wrong call."""
    op, case = use.eager, use.case
    buffers, shape, previous = None, None, None
    after_first = None
    captured: dict = {}  # shape -> the calls that captured it, in order
    with counting_graphs() as counts, npugraph_backend.rebuilt_outputs_unwarned():
        counts.ledger = Ledger(cell.op.spec, updated=updated_params(cell.op.overload()))
        for i, values in enumerate(case.calls):
            with values.noted():
                if buffers is None or shapes_of(values) != shape:
                    buffers, shape, previous = on_device(values, "npu"), shapes_of(values), None
                    mark_static(buffers, cell.shapes)
                else:
                    buffers = refilled(buffers, on_device(values, "npu"))
                eager_call = on_device(values, "npu")
                reference = on_device(values, "cpu")
                expected, _ = checked_kernel(op, i, eager_call, reference, case.tolerances)
                captures, replays = counts.captures, counts.replays
                try:
                    actual = fn(*buffers.args, **buffers.kwargs)
                except Exception as err:  # noqa: BLE001 - classified by the ladder
                    npugraph_backend.raise_if_setup(err)
                    raise as_failure(err, default_layer="replay", compile_layer="capture") from err
                _check_no_replay_waits(i, counts)
                capturing = counts.captures > captures
                eager = not capturing and counts.replays == replays
                counts.eager += eager
                outputs = [t.shape for t in tensors_of(expected)]
                counts.ledger.record(
                    shape, values, captured=capturing, eager=eager, outputs=outputs
                )
                if capturing:
                    captured.setdefault(shape, []).append(values)
                try:
                    assert_same_call(
                        i,
                        actual,
                        expected,
                        buffers,
                        eager_call,
                        layer="replay",
                        hint="",
                        writes_hint="the schema must mark every written input Tensor(a!)",
                        tolerances=case.tolerances,
                    )
                except CellFailure as failure:
                    sources = captured.get(shape, [])
                    found = None
                    if not capturing and not eager:
                        found = stale(
                            cell.op.spec, op, i, values, sources, actual, buffers, case.tolerances
                        )
                    raise found or failure from None
                _check_overwrite(previous, actual, i)
                previous = actual
            after_first = _frames() if after_first is None else after_first
    if after_first is not None and _frames() > after_first:  # a size specialized or a value guarded
        raise recompiled(_frames() - after_first, cell.shapes, case)
    return counts


_NEVER_UPDATED = "waits for a parameter update that never comes"


def _check_no_replay_waits(index: int, counts: _Counts) -> None:
    """Offline, a replay left waiting at an external event (a parameter update that never
    came) is a hang on a device: fail the call in ``replay``, with what recaptured."""
    waiting = capture.waiting_replays()
    if not waiting:
        return
    capture.reset_waiting()
    recaptured = counts.ledger.recaptured() if counts.ledger else None
    raise CellFailure(
        "replay",
        f"call {index}: a replay of a captured graph {_NEVER_UPDATED} (on a device its "
        "stream hangs): npugraph_ex keeps one list of update records "
        "per compiled graph, replaced at each capture, so replaying an earlier capture "
        "updates the latest one's task group (torch-npu 2.13.0)"
        + (f"; the earlier capture exists because the graph {recaptured[0]}" if recaptured else "")
        + "; make every host argument the kernel reads updatable, so one capture serves "
        "every value",
    )


def _frames() -> int:
    """Graphs Dynamo compiled so far (read anew: clearing Dynamo's counters replaces them)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def _check_overwrite(previous, actual, index: int) -> None:
    """npugraph_ex returns the captured output buffers: a replay overwrites what
    the previous replay returned. Check that documented behaviour explicitly."""
    for old, new in zip(tensors_of(previous), tensors_of(actual), strict=False):
        if old.untyped_storage().data_ptr() == new.untyped_storage().data_ptr():
            if not _same_values(old.cpu(), new.cpu()):
                raise CellFailure(
                    "replay",
                    f"call {index}: the output buffer shared with the previous replay holds "
                    "different values: the replay wrote its outputs elsewhere",
                )


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shapes and values, NaN equal to NaN (an op may give NaN: rsqrt(-1))."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool((a.eq(b) | (a.isnan() & b.isnan())).all())


def run(cell: Cell, dump_dir=None) -> None:
    graphs: list = []
    if cell.profile or graph_hook.listening():  # set up before its graphs can be hooked
        npugraph_backend.backend()
    hooked = patches.npugraph_ex_graphs_hooked if cell.profile else contextlib.nullcontext
    with hooked(graphs.append), graph_hook.collected(cell):
        for use in usages(cell, _cases(cell)):
            with use.case.named():
                _run_case(cell, use)
            graph_hook.case_done()
    profiles.require_reached(cell.profile, "npugraph_ex", [g.config for g in graphs])


def _run_case(cell: Cell, use: Usage) -> None:
    """On the run's shared compile of the case first (see
    :mod:`opsdk.harness.core.shared_trace`); if anything fails there, alone, with the
    diagnosis ladder, and that result stands."""
    case = use.case
    if shared_trace.passes_shared(
        cell, use, lambda compiled, counter: _check_counts(case, replay_loop(cell, use, compiled))
    ):
        return
    try:
        counts = replay_loop(cell, use, _compiled(cell, use, _cell_backend(cell)))
    except CellFailure as failure:
        with graph_hook.paused():  # the ladder's reruns are not the graph that failed
            diagnosed = _diagnose(cell, use, failure)
        raise diagnosed from None
    _check_counts(case, counts, _profile_options(cell).get("capture_limit"))


def _check_counts(case: Case, counts: _Counts, capture_limit: int | None = None) -> None:
    """Each shape captured once, and replayed; with a ``capture_limit`` below the shapes,
    the limit is reached (the shapes past it run eagerly)."""
    shapes = len({shapes_of(call) for call in case.calls})
    if capture_limit is not None and shapes > capture_limit and not counts.eager:
        raise SetupError(
            f"capture_limit={capture_limit} with {shapes} shapes, yet every call was captured "
            "or replayed: the option did not take effect, so the cell checked nothing"
        )
    if counts.captures < min(shapes, capture_limit or shapes) or counts.replays < REPLAYS:
        found = counts.ledger.recaptured() if counts.ledger else None
        raise CellFailure(
            "capture",
            f"expected a capture per shape ({shapes}) and at least {REPLAYS} replays, saw "
            f"{counts.captures} captures and {counts.replays} replays: npugraph_ex fell "
            "back to eager; "
            + (found[0] if found else "run with TORCH_LOGS=+npugraph_ex to see why"),
        )
    if counts.ledger is not None:
        counts.ledger.check(lambda message: warnings.warn(message, RecaptureWarning, 2))
        note = taken(counts.ledger.spec, case, counts.ledger.captures)
        if note is not None:
            notes.add(note)


def _passes(attempt) -> bool:
    try:
        attempt()
    except CellFailure:
        return False
    return True


def _then(failure: CellFailure, more: str) -> str:
    """The failure's message, then what the ladder found (one separator, whatever the
    message ended with)."""
    return f"{str(failure).rstrip('; .')}; {more}"


def _diagnose(cell: Cell, use: Usage, failure: CellFailure) -> CellFailure:
    """The seed guide's ladder: which rerun fixes the case says where the bug is."""
    if failure.layer in ("eager", "fake", "recompile", "stale-input") or _NEVER_UPDATED in str(
        failure
    ):
        return failure

    def passes(backend) -> bool:
        return _passes(lambda: replay_loop(cell, use, _compiled(cell, use, backend)))

    if not passes("aot_eager"):
        return CellFailure("aot", _then(failure, "aot_eager fails too: fix that column first"))
    if failure.layer == "capture" or "stream is capturing" in str(failure):
        return CellFailure(
            "capture",
            _then(
                failure,
                "the kernel synchronizes with the host or has a data-dependent output "
                "shape, which a captured graph cannot do: keep the kernel on the device",
            ),
        )
    if not passes(_cell_backend(cell, force_eager=True)):
        return CellFailure(
            "aot",
            _then(
                failure,
                "npugraph_ex with force_eager fails too: the graph npugraph_ex builds is "
                "wrong before any capture",
            ),
        )
    if passes(_cell_backend(cell, force_recapture=True)):
        return CellFailure(
            "stale-input",
            _then(
                failure,
                "force_recapture fixes it: a replay reused a value captured earlier (a "
                "Python scalar or host state read by the kernel); pass it as a tensor",
            ),
        )
    return CellFailure(
        "replay",
        _then(
            failure,
            "force_eager fixes it but force_recapture does not: the captured graph loses an "
            "effect on replay (e.g. an input write the schema does not mark Tensor(a!))",
        ),
    )


def environment() -> dict:
    return npugraph_backend.environment()
