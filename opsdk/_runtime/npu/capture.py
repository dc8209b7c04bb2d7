"""The native side of npu graphs: the capture and replay behind torch_npu's ``NPUGraph``.

torch_npu's ``npu/graphs.py`` (``NPUGraph``, ``graph()``, ``graph_pool_handle``,
``is_current_stream_capturing``) runs unchanged over :class:`NPUGraphBase`, which
stands in for the aclmdlRI stream capture its native ``_NPUGraph`` drives.

On a device, capturing records the kernels launched on the capturing stream
without running them, and a replay runs them on the same addresses, reading
whatever those buffers hold by then. Here capture is a ``TorchDispatchMode`` that
sees every op dispatched on npu tensors at kernel level and does the same: a
custom op's npu kernel (host code) runs, and the aten work it launches is
recorded, with its Python scalars baked in, not executed. A recorded op's new
outputs are allocated with the shape its Meta function gives and left unwritten,
as a capture allocates them from the graph's pool; only host-side work runs while
capturing (allocation, views, other metadata changes). A replay runs the record
in order on the captured buffers.

What a real stream capture refuses (a host sync such as ``.item()`` or ``.cpu()``,
an output shape that depends on data) fails the capture with
:class:`NpuGraphCaptureError` naming the op.

Memory a graph captured lives as long as the graph or any tensor over it: the
emulated pool never recycles a block, so pool checkpoints have nothing to restore.
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch._C import DispatchKey
from torch._ops import OpOverload
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from opsdk._runtime.npu import streams
from opsdk._runtime.npu._fallback import plan_of
from opsdk._runtime.npu._memory import DEVICE
from opsdk.errors import OpFault

DEVICE_REFUSAL = "operation not permitted when stream is capturing"

# Ops that allocate without initialising: host work, nothing to replay.
_UNINITIALISED = frozenset(
    {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
)
# Ops that only change a tensor's metadata or storage binding (host work on a device).
_REBINDING = frozenset({"set_", "resize_", "resize_as_"})
_COPIES = frozenset({"_to_copy", "copy_"})


class NpuGraphCaptureError(OpFault, RuntimeError):
    """Work inside a capture that a real NPU stream capture refuses.

    ``op`` names what was refused and ``cause`` why; ``str()`` tells what to do.
    """

    def __init__(self, message: str, *, op: str = "", cause: str = ""):
        super().__init__(message)
        self.op = op
        self.cause = cause

    @classmethod
    def refused(cls, op: str, cause: str) -> NpuGraphCaptureError:
        return cls(
            f"npu graph capture failed at {op}: {cause}. On an NPU this is "
            f'"{DEVICE_REFUSAL}". Keep host reads and data-dependent shapes out of the '
            "captured graph: compute them before the compiled call, or make the kernel "
            "device-only.",
            op=op,
            cause=cause,
        )


class NpuGraphError(OpFault, RuntimeError):
    """An NPUGraph was used out of order (replay before capture, nested captures, ...)."""


_graph_ids = itertools.count(1)
_pool_ids = itertools.count(1)


def graph_pool_handle() -> tuple[int, int]:
    """``_graph_pool_handle``: a pool id made by graph_pool_handle(), ``(0, id)``."""
    return (0, next(_pool_ids))


# --------------------------------------------------------------------------- task groups
#
# On a device, ``graph_task_group_begin/end(stream)`` around a launch while capturing
# make its kernels one task group of the graph, with a handle; later, between
# ``graph_task_update_begin(stream, handle)`` and ``graph_task_update_end(stream)``, the
# same op launched again (with new host values: its tiling) is not run but rewrites the
# group's kernels in the captured graph, in place, for every replay after it. npugraph_ex
# and TorchAir update ops of their ``_REPLACE_FUNC_MAP`` this way, the group waiting on an
# external event the update records (see :mod:`.streams`).


class _Group:
    """A task group of a captured graph: its recorded steps, which an update replaces."""

    def __init__(self, steps: list) -> None:
        self.steps = steps
        self.keep: list[torch.Tensor] = []  # memory an update's relaunch allocated

    def run(self) -> None:
        for step in self.steps:
            step.run()


def task_group_begin(stream: Any) -> None:
    """``_graph_task_group_begin``: the launches from now on form one task group."""
    recorder = _capturing_recorder("graph_task_group_begin")
    if recorder.group_start is not None:
        raise NpuGraphError("graph_task_group_begin() inside a task group: end it first")
    recorder.group_start = len(recorder.steps)


def task_group_end(stream: Any) -> _Group:
    """``_graph_task_group_end``: close the task group; its handle."""
    recorder = _capturing_recorder("graph_task_group_end")
    if recorder.group_start is None:
        raise NpuGraphError("graph_task_group_end() without graph_task_group_begin()")
    group = _Group(recorder.steps[recorder.group_start :])
    recorder.steps[recorder.group_start :] = [group]
    recorder.group_start = None
    return group


def task_update_begin(stream: Any, handle: _Group) -> None:
    """``_graph_task_update_begin``: the launches on this thread until the update ends are
    recorded (not run) as the new kernels of the task group ``handle``."""
    if not isinstance(handle, _Group):
        raise NpuGraphError(f"graph_task_update_begin(): {handle!r} is no task group handle")
    if streams.capture_underway() is not None or getattr(_updating, "update", None):
        raise NpuGraphError("graph_task_update_begin() during a capture or another update")
    recorder = _Recorder(_Updating())
    _updating.update = (handle, recorder)
    recorder.__enter__()


def task_update_end(stream: Any) -> None:
    """``_graph_task_update_end``: the task group's kernels are now those recorded."""
    underway = getattr(_updating, "update", None)
    if not underway:
        raise NpuGraphError("graph_task_update_end() without graph_task_update_begin()")
    handle, recorder = underway
    recorder.__exit__(None, None, None)
    _updating.update = None
    handle.steps = recorder.steps
    handle.keep = recorder.keep  # memory the relaunch allocated lives with the group


_updating = threading.local()


class _Refusing(Protocol):
    """What a :class:`_Recorder` records for: a graph capture, or a task update."""

    def _refuse(self, op: str, cause: str) -> None: ...


class _Updating:
    """What a task update records into: it refuses what a capture refuses."""

    def _refuse(self, op: str, cause: str) -> None:
        raise NpuGraphCaptureError.refused(op, cause)


def _capturing_recorder(what: str) -> _Recorder:
    graph = streams.capture_underway()
    if graph is None or graph._recorder is None:
        raise NpuGraphError(f"{what}() outside a graph capture")
    return graph._recorder


# --------------------------------------------------------------------------- memory


# Storages captured graphs own, by data pointer: lets torch_npu's "storage from a
# data pointer" hand back an owning storage, so a tensor rebuilt from metadata
# keeps its memory alive the way a pool block with a deleter does on the device.
_owned_storages: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()


def storage_from_data_pointer(
    data_ptr: int, device: torch.device, nbytes: int
) -> torch.UntypedStorage:
    """The storage at ``data_ptr``: a graph's own storage when one starts there, else a view."""
    owner = _owned_storages.get(data_ptr)
    if owner is not None and owner.untyped_storage().nbytes() == nbytes:
        return owner.untyped_storage()
    storage = torch._C._construct_storage_from_data_pointer(data_ptr, device, nbytes)
    assert isinstance(storage, torch.UntypedStorage)  # torch's stub says Storage
    return storage


# --------------------------------------------------------------------------- recording


def _is_npu(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.device.type == DEVICE
    if isinstance(value, (list, tuple)):
        return any(_is_npu(v) for v in value)
    return False


def _get(args: tuple, kwargs: dict, slot: int | str) -> Any:
    if isinstance(slot, str):
        return kwargs.get(slot)
    return args[slot] if slot < len(args) else None


def _recorded(op: OpOverload) -> bool:
    """Whether capture records ``op``; not work that is host-side on a device (views,
    storage rebinding, uninitialised allocation), which runs while capturing."""
    recorded = _recorded_ops.get(op)
    if recorded is None:
        recorded = _recorded_ops[op] = not (
            op._opname in _UNINITIALISED
            or op._opname in _REBINDING
            or torch.Tag.inplace_view in op.tags
            or plan_of(op).is_view
        )
    return recorded


_recorded_ops: dict[OpOverload, bool] = {}


def _refusal(op: OpOverload, args: tuple, kwargs: dict) -> str | None:
    """Why a real stream capture refuses this op, or None."""
    tags = op.tags
    if torch.Tag.data_dependent_output in tags:
        return (
            "it reads a device value on the host (Tensor.item(), .tolist(), int()/float()/"
            "bool() of a tensor, torch.equal, ...), which waits for the device"
        )
    if torch.Tag.dynamic_output_shape in tags and _shape_needs_data(op, args, kwargs):
        return (
            "its output shape depends on the data (nonzero, masked_select, boolean indexing, "
            "unique, ...), so the host has to wait for the device to size the output"
        )
    if op._opname in _COPIES and _crosses_host(op, args, kwargs):
        return (
            "it copies between host and npu memory (Tensor.cpu(), .to('cpu'), .numpy(), "
            "torch.tensor(..., device='npu'), ...), which synchronizes with the host"
        )
    return None


def _shape_needs_data(op: OpOverload, args: tuple, kwargs: dict) -> bool:
    """``dynamic_output_shape`` ops whose shape is still static for these arguments."""
    name = op._opname
    if name == "index":
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        return any(
            isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices
        )
    if name == "repeat_interleave":
        return kwargs.get("output_size") is None
    if name == "one_hot":
        classes = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
        return classes == -1
    return True


def _crosses_host(op: OpOverload, args: tuple, kwargs: dict) -> bool:
    if op._opname == "copy_":
        dst, src = args[0], args[1]
        return dst.device.type != src.device.type
    src = args[0]
    target = kwargs.get("device")
    return target is not None and torch.device(target).type != src.device.type


def _per_return(aliases: tuple, result: Any) -> tuple:
    """An op's result as one value per schema return."""
    if not aliases:
        return ()
    return (result,) if len(aliases) == 1 else tuple(result)


def _as_meta(value: Any) -> Any:
    """An npu tensor's shape, strides and dtype on the meta device: what capture knows."""
    if isinstance(value, torch.Tensor) and value.device.type == DEVICE:
        return torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device="meta")
    return value


def _placeholder(value: Any) -> Any:
    """Pool memory for a recorded op's output: allocated now, written at replay."""
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=DEVICE)
    return value


def _pin(value: Any) -> Any:
    """What a launched kernel holds: the same npu memory under a tensor object of its
    own (a replay uses the captured addresses, whatever happens to the caller's tensor
    objects); host tensors and Python scalars as they are now (baked in)."""
    if isinstance(value, torch.Tensor):
        return value.detach() if value.device.type == DEVICE else value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_pin(v) for v in value)
    return value


def _copy_into(dst: Any, src: Any) -> None:
    if isinstance(dst, torch.Tensor):
        dst.copy_(src)
    elif isinstance(dst, (list, tuple)):
        for d, s in zip(dst, src, strict=True):
            _copy_into(d, s)


@dataclass
class _Step:
    """One recorded op: what replay calls, and the captured buffers its new outputs fill
    (``None`` for a return that is one of its arguments)."""

    op: OpOverload
    args: tuple
    kwargs: dict
    outs: tuple

    def run(self) -> None:
        result = self.op(*self.args, **self.kwargs)
        if not self.outs:
            return
        results = (result,) if len(self.outs) == 1 else result
        for out, value in zip(self.outs, results, strict=True):
            if out is not None:
                _copy_into(out, value)


# --------------------------------------------------------------------------- capture


class _Recorder(TorchDispatchMode):
    """Sees every op dispatched while a graph captures; records the npu work."""

    def __init__(self, graph: _Refusing):
        super().__init__()
        self.graph = graph
        self.steps: list = []  # _Step, _Group and streams' event steps, in launch order
        self.keep: list[torch.Tensor] = []
        self.group_start: int | None = None  # where an open task group starts in steps

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not (_is_npu(args) or _is_npu(list(kwargs.values())) or _targets_npu(kwargs)):
            return func(*args, **kwargs)
        cause = _refusal(func, args, kwargs)
        if cause is not None:
            self.graph._refuse(str(func), cause)
        if _decomposes(func):
            with self:  # record what it decomposes into, as kernels would launch it
                return func.decompose(*args, **kwargs)
        if func.namespace != "aten":
            # A custom op: its npu kernel is host code that launches device work, and
            # that work is what a device capture records.
            with self:
                return func._op_dk(DispatchKey.PrivateUse1, *args, **kwargs)
        aliases = plan_of(func).aliases
        if not _recorded(func):
            result = func(*args, **kwargs)
            self._keep(aliases, result)
            return result
        return self._record(func, aliases, args, kwargs)

    def _record(self, func: OpOverload, aliases: tuple, args: tuple, kwargs: dict) -> Any:
        """Record ``func`` and return what it would: its aliased arguments, and new
        outputs shaped by its Meta function, left for the replay to write."""
        meta = func(*tree_map(_as_meta, args), **tree_map(_as_meta, kwargs))
        returned, outs = [], []
        for alias, value in zip(aliases, _per_return(aliases, meta), strict=True):
            if alias is None:
                value = tree_map(_placeholder, value)
                self._own(value)
                outs.append(_pin(value))
            else:
                value = _get(args, kwargs, alias)
                outs.append(None)
            returned.append(value)
        self.steps.append(
            _Step(func, _pin(args), {k: _pin(v) for k, v in kwargs.items()}, tuple(outs))
        )
        if not aliases:
            return None
        return returned[0] if len(returned) == 1 else type(meta)(returned)

    def _keep(self, aliases: tuple, result: Any) -> None:
        for alias, value in zip(aliases, _per_return(aliases, result), strict=True):
            if alias is None:
                self._own(value)

    def _own(self, value: Any) -> None:
        """Memory the capture allocated: the graph keeps it for its replays."""
        if isinstance(value, torch.Tensor):
            if value.device.type == DEVICE:
                pinned = value.detach()
                self.keep.append(pinned)
                ptr = pinned.untyped_storage().data_ptr()
                if ptr:
                    _owned_storages[ptr] = pinned
        elif isinstance(value, (list, tuple)):
            for v in value:
                self._own(v)


def _decomposes(op: OpOverload) -> bool:
    """A composite the npu device has no kernel of its own for (reached here below autograd)."""
    name = op.name()
    return torch._C._dispatch_has_kernel_for_dispatch_key(
        name, "CompositeImplicitAutograd"
    ) and not torch._C._dispatch_has_kernel_for_dispatch_key(name, "PrivateUse1")


def _targets_npu(kwargs: dict) -> bool:
    device = kwargs.get("device")
    return device is not None and torch.device(device).type == DEVICE


class NPUGraphBase:
    """``torch_npu._C._NPUGraph``: one captured graph (see the module docstring)."""

    def __init__(self) -> None:
        self._id = next(_graph_ids)
        self._recorder: _Recorder | None = None
        self._steps: list[_Step] = []
        self._keep: list[torch.Tensor] = []
        self._pool: tuple[int, int] | None = None
        self._captured = False
        self._failure: NpuGraphCaptureError | None = None

    def capture_begin(
        self, pool: Any = None, capture_error_mode: str = "global", report_shape: bool = True
    ) -> None:
        """Start recording this thread's npu work on its current stream, which must not
        be the default stream. ``capture_error_mode`` is accepted for the API: the
        emulated device refuses the same things in every mode."""
        if streams.get_current_stream()[0] == streams.DEFAULT_STREAM_ID:
            raise NpuGraphError(
                "NPU graphs must be captured on a non-default stream (torch.npu.graph(...) "
                "selects one)"
            )
        if streams.capture_underway() is not None:
            raise NpuGraphError("a capture is already underway on this thread")
        if self._captured:
            raise NpuGraphError(
                "this NPUGraph already holds a captured graph; reset() it or use a new one"
            )
        self._pool = tuple(pool) if pool is not None else (self._id, 0)
        self._failure = None
        self._recorder = _Recorder(self)
        streams.start_capture(self)
        self._recorder.__enter__()

    def capture_end(self) -> None:
        """End the capture; a capture that something invalidated raises what did."""
        recorder = self._recorder
        if recorder is None or streams.capture_underway() is not self:
            raise NpuGraphError("capture_end() without a matching capture_begin() on this thread")
        recorder.__exit__(None, None, None)
        streams.stop_capture()
        self._recorder = None
        if self._failure is not None:
            raise self._failure
        self._steps, self._keep = recorder.steps, recorder.keep
        self._captured = True

    def _refuse(self, op: str, cause: str) -> None:
        error = NpuGraphCaptureError.refused(op, cause)
        if self._failure is None:
            self._failure = error
        raise error

    def replay(self) -> None:
        if not self._captured:
            if self._failure is not None:
                raise NpuGraphError(f"cannot replay: the capture failed ({self._failure})")
            raise NpuGraphError("replay() before a successful capture")
        if self in _waiting:
            raise NpuGraphError(
                f"graph {self._id} replayed while its previous replay still waits at an "
                "external event nothing recorded (on a device its stream hangs there)"
            )
        self._run_from(0)

    def _run_from(self, start: int) -> None:
        """Run the steps from ``start``; at a wait on an external event not yet recorded,
        the rest runs when it is (the replay's stream waits there, as on the device)."""
        _waiting.discard(self)
        with torch.no_grad():
            for index in range(start, len(self._steps)):
                step = self._steps[index]
                if isinstance(step, streams.EventStep) and step.blocks():
                    _waiting.add(self)
                    step.event.when_recorded(lambda index=index: self._run_from(index + 1))
                    return
                step.run()

    def record_event_step(self, step: streams.EventStep) -> None:
        """An external event's record, wait or reset captured into this graph."""
        assert self._recorder is not None  # asked of the graph capture_underway() names
        self._recorder.steps.append(step)

    def reset(self) -> None:
        self._steps, self._keep = [], []
        self._captured = False
        self._failure = None

    def pool(self) -> tuple[int, int] | None:
        return self._pool

    def debug_dump(self, debug_path: str) -> None:
        """The replayed ops as JSON (npugraph_ex dumps each graph under TORCH_COMPILE_DEBUG)."""
        with open(debug_path, "w") as f:
            json.dump({"ops": self.recorded_ops}, f, indent=1)

    @property
    def recorded_ops(self) -> list[str]:
        """The ops a replay runs, in order (for reports and tests); a task group's in
        brackets, an external event's step by its kind."""
        return _names(self._steps)


# Graphs whose replay waits at an external event not yet recorded.
_waiting: weakref.WeakSet[NPUGraphBase] = weakref.WeakSet()


def waiting_replays() -> list[int]:
    """The ids of the graphs whose last replay still waits at an external event: on a
    device their streams hang there, whatever the host does next."""
    return sorted(g._id for g in _waiting)


def reset_waiting() -> None:
    """Give up the waiting replays (a harness moving on after reporting them)."""
    _waiting.clear()


def _names(steps: list) -> list:
    return [
        _names(s.steps) if isinstance(s, _Group) else getattr(s, "kind", None) or str(s.op)
        for s in steps
    ]
