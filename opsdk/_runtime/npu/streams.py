"""The native side of npu streams and events: what ``torch_npu._C`` gives torch_npu's
``npu/streams.py`` and ``npu/utils.py``, which run unchanged above it.

The emulated device runs every op synchronously on the host, so all work is
complete and ordered by the time a call returns: a stream is an id that can be
created, selected and compared, and an event is a marker that is always complete.
A stream may be capturing a graph (:mod:`opsdk._runtime.npu.capture` starts and
stops it here); what a real capture refuses, a host synchronization, is refused
then (:func:`check_host_sync`).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import torch

from opsdk._runtime.npu._memory import DEVICE, check_index

DEVICE_TYPE: int = torch._C._autograd.DeviceType.PrivateUse1.value  # what torch_npu reports (20)
DEFAULT_STREAM_ID = 0

_stream_ids = itertools.count(DEFAULT_STREAM_ID + 1)
_event_ids = itertools.count(1)
_local = threading.local()


def _index(device_index: int | None) -> int:
    if device_index not in (None, -1):
        check_index(torch.device(DEVICE, device_index))
    return 0


class _NPUStreamBase:
    """``torch_npu._C._NPUStreamBase``: a new stream, or the one named by ``stream_id``."""

    stream_id: int
    device_index: int
    device_type: int
    priority: int

    def __new__(
        cls,
        priority: int = 0,
        stream_id: int | None = None,
        device_index: int | None = None,
        device_type: int | None = None,
        stream_ptr: int | None = None,
        is_sync_launch: int = 0,
    ):
        self = super().__new__(cls)
        self.stream_id = next(_stream_ids) if stream_id is None else stream_id
        self.device_index = _index(device_index)
        self.device_type = DEVICE_TYPE if device_type is None else device_type
        self.priority = priority
        return self

    @property
    def device(self) -> torch.device:
        return torch.device(DEVICE, self.device_index)

    @property
    def npu_stream(self) -> int:
        """The ``aclrtStream`` handle: here, an address-like id of the stream."""
        return 0x1000 + self.stream_id

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        check_host_sync("torch.npu.Stream.synchronize()")

    def set_data_preprocess_stream(self, is_data_preprocess_stream: bool = False) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _NPUStreamBase)
            and other.stream_id == self.stream_id
            and other.device_index == self.device_index
        )


class _NPUEventBase:
    """``torch_npu._C._NPUEventBase``: always complete, since work finishes before a call
    returns, so recording and waiting have nothing to wait for; except an external event
    (``graph_external``, torch_npu's ``ExternalEvent``): one a captured graph waits on
    blocks that graph's replay until it is recorded (see :class:`EventStep`)."""

    npu_event: int
    graph_external: bool
    recorded: bool
    _waiting: list[Callable[[], None]]

    def __new__(
        cls,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        graph_external: bool = False,
    ):
        self = super().__new__(cls)
        self.npu_event = 0  # created lazily, at the first record, as on the device
        self.graph_external = graph_external
        self.recorded = False  # an external event's flag: set by record, cleared by reset
        self._waiting = []  # replays blocked on it, resumed when it is recorded
        return self

    def record(self, stream: _NPUStreamBase) -> None:
        self.npu_event = self.npu_event or next(_event_ids)
        if not self._captured("record"):
            self._set(True)

    def wait(self, stream: _NPUStreamBase) -> None:
        self._captured("wait")

    def reset(self, stream: _NPUStreamBase) -> None:
        if not self._captured("reset"):
            self._set(False)

    def _captured(self, kind: str) -> bool:
        """Whether this call went into a graph being captured (an external event's
        record, wait and reset are nodes of the graph there, run at replay)."""
        graph = capture_underway()
        if not self.graph_external or graph is None:
            return False
        graph.record_event_step(EventStep(self, kind))
        return True

    def _set(self, recorded: bool) -> None:
        self.recorded = recorded
        while recorded and self._waiting:
            self._waiting.pop(0)()

    def when_recorded(self, resume) -> None:
        """Run ``resume`` (the rest of a blocked replay) once this event is recorded."""
        self._waiting.append(resume)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        check_host_sync("torch.npu.Event.synchronize()")


class EventStep:
    """An external event's ``record``, ``wait`` or ``reset`` in a captured graph: a
    ``wait`` on an event not yet recorded blocks the replay there (:meth:`blocks`)."""

    def __init__(self, event: _NPUEventBase, kind: str) -> None:
        self.event, self.kind = event, f"external event {kind}"
        self._kind = kind

    def blocks(self) -> bool:
        return self._kind == "wait" and not self.event.recorded

    def run(self) -> None:
        if self._kind != "wait":
            self.event._set(self._kind == "record")


def _stream_data(stream_id: int) -> tuple[int, int, int]:
    return (stream_id, 0, DEVICE_TYPE)


def get_current_stream(device_index: int | None = None) -> tuple[int, int, int]:
    """``_npu_getCurrentStream``: this thread's stream (torch_npu's is per thread)."""
    _index(device_index)
    return _stream_data(getattr(_local, "stream_id", DEFAULT_STREAM_ID))


def get_default_stream(device_index: int | None = None) -> tuple[int, int, int]:
    _index(device_index)
    return _stream_data(DEFAULT_STREAM_ID)


def set_stream(stream_id: int, device_index: int, device_type: int) -> None:
    _index(device_index)
    _local.stream_id = stream_id


def synchronize(*args: Any) -> None:
    """``_npu_synchronize``: wait for the device, which a capture refuses."""
    check_host_sync("torch.npu.synchronize()")


# --------------------------------------------------------------------------- capture status


def capture_underway() -> Any:
    """The graph this thread is capturing into, if any."""
    underway = getattr(_local, "capture", None)
    return underway[1] if underway else None


def start_capture(graph: Any) -> int:
    """Capture ``graph`` on this thread's current stream; its id."""
    stream_id = get_current_stream()[0]
    _local.capture = (stream_id, graph)
    return stream_id


def stop_capture() -> None:
    _local.capture = None


def is_current_stream_capturing() -> bool:
    """``_npu_isCurrentStreamCapturing``: a capture is underway on this thread's stream."""
    underway = getattr(_local, "capture", None)
    return underway is not None and underway[0] == get_current_stream()[0]


def check_host_sync(what: str) -> None:
    """Refuse a host/device synchronization while this thread is capturing."""
    graph = capture_underway()
    if graph is not None:
        graph._refuse(what, "it waits on the host for device work to finish")
