"""Capture and replay of npu work: the offline stand-in for torch_npu's ``NPUGraph``.

On an NPU, capturing records the kernels launched on the capturing stream
without running them, and a replay relaunches them on the same device addresses.
Here capture is a ``TorchDispatchMode`` that sees every op dispatched on npu
tensors at kernel level: a custom op's npu kernel runs while capturing, so what
gets recorded is the aten work it launches, with its Python scalars baked in, as
on the device. Replay re-runs that log on the captured buffers.

Capture runs each op so later ops get real shapes and buffers, but only ever
writes memory allocated during the capture: a write to memory that existed
before goes to a scratch buffer instead (the device executes nothing while
capturing), and replay performs it for real. Memory allocated uninitialised
during the capture is zeroed: what ops read there while capturing is arbitrary
on a device, where they do not run, but the emulated run would trip on garbage
indices (npugraph_ex captures over fresh, unfilled input buffers). What a real
stream capture refuses (a host sync such as ``.item()`` or ``.cpu()``, an output
shape that depends on data) fails the capture with :class:`NpuGraphCaptureError`
naming the op.

Memory a graph captured lives as long as the graph or any tensor over it: the
emulated pool never recycles a block, so pool checkpoints have nothing to restore.
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import torch
from torch._C import DispatchKey
from torch._ops import OpOverload
from torch.utils._python_dispatch import TorchDispatchMode

from opsdk.errors import OpFault
from opsdk.offline.npu._memory import DEVICE

DEVICE_REFUSAL = "operation not permitted when stream is capturing"

# Ops that allocate without initialising: nothing to redo on replay.
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


_local = threading.local()
_pool_ids = itertools.count(1)


def current_capture() -> NPUGraph | None:
    """The graph this thread is capturing into, if any."""
    return getattr(_local, "graph", None)


def check_host_sync(what: str) -> None:
    """Refuse a host/device synchronization while this thread is capturing."""
    graph = current_capture()
    if graph is not None:
        graph._refuse(what, "it waits on the host for device work to finish")


def graph_pool_handle() -> tuple[int, int]:
    """An opaque id of a graph memory pool, shaped like torch_npu's ``(0, id)``."""
    return (0, next(_pool_ids))


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
    return torch._C._construct_storage_from_data_pointer(data_ptr, device, nbytes)


def _register_owned(t: torch.Tensor) -> None:
    ptr = t.untyped_storage().data_ptr()
    if ptr:
        _owned_storages[ptr] = t


# --------------------------------------------------------------------------- op plans


def _is_npu(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.device.type == DEVICE
    if isinstance(value, (list, tuple)):
        return any(_is_npu(v) for v in value)
    return False


def _get(args: list, kwargs: dict, slot: int | str) -> Any:
    if isinstance(slot, str):
        return kwargs.get(slot)
    return args[slot] if slot < len(args) else None


def _put(args: list, kwargs: dict, slot: int | str, value: Any) -> None:
    if isinstance(slot, str):
        kwargs[slot] = value
    else:
        args[slot] = value


@dataclass(frozen=True)
class _Plan:
    """How capture treats one op, from its schema.

    ``written`` are the argument slots the op writes (index or keyword name);
    ``aliases`` gives, per return, the slot it aliases (``None``: a fresh tensor);
    ``replayed`` is False for work that is host-side on a device (views, storage
    rebinding, uninitialised allocation).
    """

    written: tuple[int | str, ...]
    aliases: tuple[int | str | None, ...]
    replayed: bool

    @classmethod
    def of(cls, op: OpOverload) -> _Plan:
        schema = op._schema
        owner: dict[str, int | str] = {}
        written = []
        for index, arg in enumerate(schema.arguments):
            slot = arg.name if arg.kwarg_only else index
            info = arg.alias_info
            if info is None:
                continue
            for alias_set in info.before_set:
                owner.setdefault(alias_set, slot)
            if info.is_write:
                written.append(slot)
        aliases = tuple(
            None
            if ret.alias_info is None
            else next((owner[s] for s in ret.alias_info.before_set if s in owner), None)
            for ret in schema.returns
        )
        is_view = not written and aliases and all(a is not None for a in aliases)
        host_side = (
            op._opname in _UNINITIALISED
            or op._opname in _REBINDING
            or torch.Tag.inplace_view in op.tags
            or is_view
        )
        return cls(tuple(written), aliases, not host_side)


_plans: dict[OpOverload, _Plan] = {}


def _plan(op: OpOverload) -> _Plan:
    plan = _plans.get(op)
    if plan is None:
        plan = _plans[op] = _Plan.of(op)
    return plan


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


def _per_return(plan: _Plan, result: Any) -> tuple:
    """An op's result as one value per schema return."""
    if not plan.aliases:
        return ()
    return (result,) if len(plan.aliases) == 1 else tuple(result)


def _pin(value: Any) -> Any:
    """The same memory under a tensor object of its own: a replay uses the captured
    addresses, whatever later happens to the caller's tensor objects."""
    if isinstance(value, torch.Tensor):
        return value.detach()
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
    """One recorded op: what replay calls, and the captured buffers its fresh outputs fill."""

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

    def __init__(self, graph: NPUGraph):
        super().__init__()
        self.graph = graph
        self.steps: list[_Step] = []
        self.owned: set[int] = set()
        self.keep: list[torch.Tensor] = []

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
        plan = _plan(func)
        if not plan.replayed:
            result = func(*args, **kwargs)
            self._own_fresh(plan, result)
            if func._opname in _UNINITIALISED:
                result.zero_()  # not recorded: this mode is off inside its own dispatch
            return result
        return self._run_and_record(func, plan, list(args), dict(kwargs))

    def _run_and_record(self, func: OpOverload, plan: _Plan, args: list, kwargs: dict) -> Any:
        step = _Step(func, _pin(tuple(args)), {k: _pin(v) for k, v in kwargs.items()}, ())
        originals: dict[int | str, Any] = {}
        for slot in plan.written:
            value = _get(args, kwargs, slot)
            scratch = self._scratch(value)
            if scratch is not value:
                originals[slot] = value
                _put(args, kwargs, slot, scratch)
        result = func(*args, **kwargs)
        if not plan.aliases:
            self.steps.append(step)
            return result
        outs, returned = [], []
        for alias, value in zip(plan.aliases, _per_return(plan, result), strict=True):
            if alias is None:
                self._own(value)
                outs.append(_pin(value))
                returned.append(value)
            else:
                outs.append(None)
                returned.append(originals.get(alias, value))
        step.outs = tuple(outs)
        self.steps.append(step)
        return returned[0] if len(returned) == 1 else type(result)(returned)

    def _scratch(self, value: Any) -> Any:
        """A stand-in buffer for memory that existed before the capture."""
        if isinstance(value, torch.Tensor):
            if value.device.type != DEVICE or value.untyped_storage()._cdata in self.owned:
                return value
            scratch = torch.empty_strided(
                value.size(), value.stride(), dtype=value.dtype, device=value.device
            )
            self.owned.add(scratch.untyped_storage()._cdata)
            return scratch
        if isinstance(value, (list, tuple)):
            return type(value)(self._scratch(v) for v in value)
        return value

    def _own_fresh(self, plan: _Plan, result: Any) -> None:
        for alias, value in zip(plan.aliases, _per_return(plan, result), strict=True):
            if alias is None:
                self._own(value)

    def _own(self, value: Any) -> None:
        """Memory the capture allocated: the graph keeps it for its replays."""
        if isinstance(value, torch.Tensor):
            if value.device.type == DEVICE:
                self.owned.add(value.untyped_storage()._cdata)
                pinned = value.detach()
                self.keep.append(pinned)
                _register_owned(pinned)
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


class NPUGraph:
    """torch_npu's ``NPUGraph`` API over the capture recorder (see the module docstring)."""

    def __init__(self) -> None:
        self._recorder: _Recorder | None = None
        self._steps: list[_Step] = []
        self._keep: list[torch.Tensor] = []
        self._pool: tuple[int, int] | None = None
        self._captured = False
        self._failure: NpuGraphCaptureError | None = None
        self.capture_error_mode = "global"

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        """Start recording this thread's npu work. ``capture_error_mode`` is kept for the
        API: the emulated device refuses the same things in every mode."""
        if current_capture() is not None:
            raise NpuGraphError("a capture is already underway on this thread")
        if self._captured:
            raise NpuGraphError(
                "this NPUGraph already holds a captured graph; reset() it or use a new one"
            )
        self._pool = tuple(pool) if pool is not None else graph_pool_handle()
        self.capture_error_mode = capture_error_mode
        self._failure = None
        self._recorder = _Recorder(self)
        _local.graph = self
        self._recorder.__enter__()

    def capture_end(self) -> None:
        self._end_capture(raise_if_invalid=True)

    def _end_capture(self, raise_if_invalid: bool) -> None:
        recorder = self._recorder
        if recorder is None or current_capture() is not self:
            raise NpuGraphError("capture_end() without a matching capture_begin() on this thread")
        recorder.__exit__(None, None, None)
        _local.graph = None
        self._recorder = None
        if self._failure is None:
            self._steps, self._keep = recorder.steps, recorder.keep
            self._captured = True
        elif raise_if_invalid:
            raise self._failure

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
        with torch.no_grad():
            for step in self._steps:
                step.run()

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
        """The ops a replay runs, in order (for reports and tests)."""
        return [str(step.op) for step in self._steps]


class graph:
    """``torch.npu.graph(npu_graph, pool=None, stream=None, ...)``: capture on a side stream.

    An exception raised inside the block (a refused op, say) ends the capture
    without raising again, so the original error is the one that propagates.
    """

    default_capture_stream: Any = None

    def __init__(
        self,
        npu_graph: NPUGraph,
        pool: Any = None,
        stream: Any = None,
        auto_dispatch_capture: bool = False,
        capture_error_mode: str = "global",
    ):
        if auto_dispatch_capture:
            raise NpuGraphError(
                "auto_dispatch_capture (NPUGraph.update) drives device kernels' task "
                "updates, which the emulated npu device does not have"
            )
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = torch.npu.Stream()
            stream = graph.default_capture_stream
        self.npu_graph = npu_graph
        self.pool = pool
        self.capture_error_mode = capture_error_mode
        self.stream_ctx = torch.npu.stream(stream)

    def __enter__(self) -> None:
        torch.npu.synchronize()
        self.stream_ctx.__enter__()
        self.npu_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        try:
            self.npu_graph._end_capture(raise_if_invalid=exc_type is None)
        finally:
            self.stream_ctx.__exit__(exc_type, exc_value, traceback)
