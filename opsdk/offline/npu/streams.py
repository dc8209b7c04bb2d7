"""Streams and events of the emulated npu device, with torch_npu's Python API.

The emulated device runs every op synchronously on the host, so all work is
complete and ordered by the time a call returns: a stream is an id that
torch_npu-shaped code can create, select and compare, and events are markers
that are always complete. What a real stream refuses while it captures a graph
(``synchronize`` waits on the host) is refused here too.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import torch

from opsdk.offline.npu import graphs as npu_graph
from opsdk.offline.npu._memory import DEVICE

DEVICE_TYPE = int(torch._C._autograd.DeviceType.PrivateUse1)  # what torch_npu reports (20)
_DEFAULT_STREAM_ID = 0

_stream_ids = itertools.count(_DEFAULT_STREAM_ID + 1)
_local = threading.local()


def _device_index(device: Any) -> int:
    if device is None or isinstance(device, int):
        index = device
    else:
        index = torch.device(device).index
    if index not in (None, -1, 0):
        raise ValueError(f"{DEVICE}:{index} does not exist: the emulated device has one card")
    return 0


class Stream:
    """``torch.npu.Stream``: a new stream, or an existing one given its ``stream_id``."""

    def __init__(
        self,
        device: Any = None,
        priority: int = 0,
        *,
        stream_id: int | None = None,
        device_index: int | None = None,
        device_type: int | None = None,
    ):
        self.device_index = _device_index(device if device_index is None else device_index)
        self.device_type = DEVICE_TYPE if device_type is None else device_type
        self.stream_id = next(_stream_ids) if stream_id is None else stream_id
        self.priority = priority

    @property
    def device(self) -> torch.device:
        return torch.device(DEVICE, self.device_index)

    def wait_event(self, event: Event) -> None:
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        npu_graph.check_host_sync("torch.npu.Stream.synchronize()")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Stream)
            and other.stream_id == self.stream_id
            and other.device_index == self.device_index
        )

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index))

    def __repr__(self) -> str:
        return f"<torch.npu.Stream device={self.device} stream_id={self.stream_id}>"


class Event:
    """``torch.npu.Event``: always complete, since work finishes before a call returns,
    so recording and waiting have nothing to do."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ):
        self.enable_timing = enable_timing

    def record(self, stream: Stream | None = None) -> None:
        return None

    def wait(self, stream: Stream | None = None) -> None:
        return None

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        npu_graph.check_host_sync("torch.npu.Event.synchronize()")


class ExternalEvent(Event):
    """``torch.npu.ExternalEvent``: an event that may be waited on before it is recorded."""

    def __init__(self) -> None:
        super().__init__()

    def reset(self, stream: Stream | None = None) -> None:
        return None


def default_stream(device: Any = None) -> Stream:
    return Stream(stream_id=_DEFAULT_STREAM_ID, device_index=_device_index(device))


def current_stream(device: Any = None) -> Stream:
    """The stream this thread has selected (torch_npu's current stream is per thread)."""
    current = getattr(_local, "stream", None)
    return current if current is not None else default_stream(device)


def set_stream(stream: Stream | None) -> None:
    if stream is not None:
        _local.stream = stream


class StreamContext:
    """``torch.npu.stream(s)``: select ``s`` for the block (no-op for ``None``)."""

    def __init__(self, stream: Stream | None):
        self.stream = stream
        self.previous: Stream | None = None

    def __enter__(self) -> None:
        if self.stream is not None:
            self.previous = current_stream()
            set_stream(self.stream)

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None:
            set_stream(self.previous)


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)
