"""An emulated ``npu`` device for CPU-only torch, so npu code paths run offline.

PrivateUse1 is renamed ``npu``. Memory is real CPU memory labelled as npu
memory: a CPU buffer's DLPack capsule is relabelled to ``kDLExtDev`` and
imported, giving an ``npu:0`` tensor whose storage owns the buffer. Aten ops run
on CPU aliases of that memory (one boxed fallback, also registered directly for
ops that would otherwise take a slower composite path), so writes land in the
npu tensors and views stay views. A non-aten op reaching the fallback is
refused: a custom op needs its own npu kernel, exactly as on a real NPU.

Pinned to torch 2.13: it relies on private APIs
(``_setup_privateuseone_for_python_backend``, ``_construct_storage_from_data_pointer``,
``torch._C._acc.create_empty_tensor``, ``OpOverload._op_dk``).
"""

from __future__ import annotations

import ctypes
import math
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch._C import DispatchKey
from torch._ops import OpOverload
from torch.utils._python_dispatch import _disable_current_modes

from opsdk.errors import OpFault

DEVICE = "npu"
_KDL_CPU = 1
_KDL_EXT_DEV = 12
_DLTENSOR_DEVICE_TYPE_OFFSET = 8  # DLTensor starts with void* data, then int32 device_type
_CPU = torch.device("cpu")
_CPU_KEY = DispatchKey.CPU

_aten = torch.ops.aten
_AS_STRIDED = _aten.as_strided.default
_SET = _aten.set_.source_Storage_storage_offset
_RESIZE = _aten.resize_.default
_TO_COPY = _aten._to_copy.default

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# dtypes a DLPack capsule carries; other dtypes travel as raw bytes.
_DLPACK_DTYPES = frozenset(
    {
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
    }
)


class MissingNpuKernelError(OpFault, NotImplementedError):
    """A non-aten op reached the npu device without an npu kernel of its own."""


class NpuDeviceError(OpFault, RuntimeError):
    """The emulated npu device was asked for something a real one would refuse."""


# --------------------------------------------------------------------------- memory


def _relabel(capsule: Any, device_type: int) -> Any:
    """Rewrite a DLPack capsule's device type in place; the data stays put."""
    managed = _capsule_pointer(capsule, b"dltensor")
    ctypes.c_int32.from_address(managed + _DLTENSOR_DEVICE_TYPE_OFFSET).value = device_type
    return capsule


def _over(
    storage: torch.UntypedStorage, dtype: torch.dtype, offset: int, size: Any, stride: Any
) -> torch.Tensor:
    """A tensor over ``storage`` (on its device) with the given dtype and geometry."""
    if storage.device.type == DEVICE:
        out = torch._C._acc.create_empty_tensor((0,), dtype)
    else:
        out = torch.empty((0,), dtype=dtype)
    return _SET._op_dk(_CPU_KEY, out, storage, offset, size, stride)


def _bytes_of(t: torch.Tensor) -> torch.Tensor:
    """A 1-d uint8 tensor over all of ``t``'s storage (same device, same memory)."""
    storage = t.untyped_storage()
    return _over(storage, torch.uint8, 0, (storage.nbytes(),), (1,))


def _relabelled(t: torch.Tensor, device_type: int) -> torch.Tensor:
    """All of ``t``'s storage as uint8, moved to the other device without a copy."""
    return torch._C._from_dlpack(_relabel(torch._C._to_dlpack(_bytes_of(t)), device_type))


def _lazy_bits(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``t`` (plain data) with ``like``'s lazy conjugate/negative bits."""
    if like.is_conj():
        t = t._conj()
    return t._neg_view() if like.is_neg() else t


def as_npu(cpu: torch.Tensor) -> torch.Tensor:
    """An ``npu:0`` tensor over ``cpu``'s memory (no copy, no autograd link).

    The npu tensor's storage keeps the CPU memory alive.
    """
    if cpu.dtype in _DLPACK_DTYPES and not (cpu.is_conj() or cpu.is_neg()):
        return torch._C._from_dlpack(_relabel(torch._C._to_dlpack(cpu), _KDL_EXT_DEV))
    raw = _relabelled(cpu, _KDL_EXT_DEV).untyped_storage()
    return _lazy_bits(_over(raw, cpu.dtype, cpu.storage_offset(), cpu.size(), cpu.stride()), cpu)


def as_cpu(npu: torch.Tensor) -> torch.Tensor:
    """A CPU tensor over ``npu``'s memory: same storage offset, sizes and strides, no copy.

    The alias's storage holds a reference to the npu memory, so the alias (and
    any view of it) stays valid after ``npu`` itself is gone.
    """
    if npu.device.type != DEVICE:
        raise NpuDeviceError(f"as_cpu expects an {DEVICE} tensor, got one on {npu.device}")
    raw = _relabelled(npu, _KDL_CPU).untyped_storage()
    return _lazy_bits(_over(raw, npu.dtype, npu.storage_offset(), npu.size(), npu.stride()), npu)


class _AliasCache:
    """Non-owning CPU views of npu memory, for use while the npu tensor is alive.

    A non-owning storage is only an (address, length) pair, so an entry is right
    for any live npu storage with that key and the cache holds no memory.
    """

    limit = 4096

    def __init__(self) -> None:
        self._flat: dict[tuple[int, int, torch.dtype], torch.Tensor] = {}

    def tensor(self, t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes(), t.dtype)
        flat = self._flat.get(key)
        if flat is None:
            flat = self._flat_for(key)
        cpu = torch.as_strided(flat, t.size(), t.stride(), t.storage_offset())
        return _lazy_bits(cpu, t) if t.dtype.is_complex else cpu

    def storage(self, npu_storage: torch.UntypedStorage) -> torch.UntypedStorage:
        key = (npu_storage.data_ptr(), npu_storage.nbytes(), torch.uint8)
        flat = self._flat.get(key)
        return (flat if flat is not None else self._flat_for(key)).untyped_storage()

    def _flat_for(self, key: tuple[int, int, torch.dtype]) -> torch.Tensor:
        if len(self._flat) >= self.limit:
            self._flat.clear()
        address, nbytes, dtype = key
        storage = torch._C._construct_storage_from_data_pointer(address, _CPU, nbytes)
        flat = self._flat[key] = torch.empty((0,), dtype=dtype).set_(storage, 0, (0,), (1,))
        return flat


_aliases = _AliasCache()


def _host(t: torch.Tensor) -> torch.Tensor:
    return t if t.is_cpu else _aliases.tensor(t)


def _view_of(src: torch.Tensor, src_alias: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """The npu counterpart of CPU result ``r``: a view of ``src`` if ``r`` views it."""
    if r.untyped_storage().data_ptr() != src_alias.untyped_storage().data_ptr():
        return as_npu(r)
    if r.dtype == src.dtype:
        return _AS_STRIDED._op_dk(_CPU_KEY, src, r.size(), r.stride(), r.storage_offset())
    return _over(src.untyped_storage(), r.dtype, r.storage_offset(), r.size(), r.stride())


def _fresh(value: Any) -> Any:
    """Move a freshly computed CPU result onto npu without copying."""
    if isinstance(value, torch.Tensor):
        return as_npu(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_fresh(v) for v in value)
    return value


def _check_index(device: torch.device | None) -> None:
    if device is not None and device.index not in (None, 0):
        raise NpuDeviceError(
            f"{device} does not exist: the emulated {DEVICE} device has one card, {DEVICE}:0"
        )


# --------------------------------------------------------------------------- fallback

_TENSOR, _TENSORS, _STORAGE, _DEVICE, _GENERATOR = range(5)
_FRESH, _VIEW, _WRITE = range(3)
# Ops that take CPU index tensors next to device tensors on real devices too.
_MIXED_DEVICE_OPS = frozenset({"index", "index_put", "index_put_", "_index_put_impl_"})


def _kind(t: Any) -> int | None:
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    if isinstance(t, torch.TensorType):
        return _TENSOR
    if isinstance(t, torch.ListType):
        elem = t.getElementType()
        if isinstance(elem, torch.OptionalType):
            elem = elem.getElementType()
        return _TENSORS if isinstance(elem, torch.TensorType) else None
    return {"Storage": _STORAGE, "Device": _DEVICE, "Generator": _GENERATOR}.get(str(t))


def _missing_kernel(op: OpOverload) -> MissingNpuKernelError:
    qualname = op._schema.name
    ns, _, name = qualname.partition("::")
    return MissingNpuKernelError(
        f"{op._schema.name}.{op._overloadname} has no '{DEVICE}' kernel. The emulated "
        f"{DEVICE} device runs only aten ops in place of one, never a custom op's CPU kernel. "
        f'Register an {DEVICE} kernel: torch.library.register_kernel("{qualname}", '
        f'"{DEVICE}", fn), @torch.library.custom_op(..., device_types="{DEVICE}"), or '
        f'torch.library.Library("{ns}", "IMPL").impl("{name}", fn, "PrivateUse1").'
    )


class _Plan:
    """How one aten overload runs on CPU aliases; analysed once per overload."""

    def __init__(self, op: OpOverload) -> None:
        schema = op._schema
        self.op = op
        self.call = op._op  # the overload's C++ entry point, minus OpOverload.__call__
        self.check_devices = op._opname not in _MIXED_DEVICE_OPS
        self.numbers_ok = torch._C._should_allow_numbers_as_tensors(op._opname)
        self.positional: list[tuple[int, int]] = []
        self.keyword: list[tuple[str, int]] = []
        self.writes: list[int | str] = []
        self.generator: str | None = None
        owner: dict[str, int | str] = {}
        for index, arg in enumerate(schema.arguments):
            kind = _kind(arg.type)
            info = arg.alias_info
            if info is not None:
                for alias_set in info.before_set:
                    owner.setdefault(alias_set, arg.name if arg.kwarg_only else index)
                if info.is_write and kind == _TENSOR:
                    self.writes.append(arg.name if arg.kwarg_only else index)
            if kind == _GENERATOR:
                self.generator = arg.name
            elif kind is not None:
                target = self.keyword if arg.kwarg_only else self.positional
                target.append((arg.name if arg.kwarg_only else index, kind))  # type: ignore[arg-type]
        self.returns: list[tuple[int, int | str | None]] = []
        for ret in schema.returns:
            info = ret.alias_info
            if info is None:
                self.returns.append((_FRESH, None))
            else:
                # A list return (``Tensor(a)[]``) reaches Python without its alias set;
                # it views the first aliased argument (``Tensor(a -> *) self``).
                sets = info.before_set or set(owner)
                source = next((owner[s] for s in sorted(sets) if s in owner), None)
                self.returns.append((_WRITE if info.is_write else _VIEW, source))
        self.all_fresh = all(kind == _FRESH for kind, _ in self.returns)

    def _convert(self, value: Any, kind: int) -> Any:
        """The CPU counterpart of one argument."""
        if kind == _TENSOR:
            if not isinstance(value, torch.Tensor):
                # The boxed call unwrapped a wrapped-number tensor into a Python scalar.
                if self.numbers_ok or value is None:
                    return value
                return torch.tensor(value)
            if not value.is_cpu:
                return _aliases.tensor(value)
            if self.check_devices and value.dim():
                raise RuntimeError(
                    f"{self.op}: expected all tensors to be on the same device, but found "
                    f"at least two devices, {DEVICE}:0 and cpu!"
                )
            return value
        if value is None:
            return None
        if kind == _TENSORS:
            return [self._convert(v, _TENSOR) for v in value]
        if kind == _STORAGE:
            return _aliases.storage(value) if value.device.type == DEVICE else value
        _check_index(value)
        return _CPU if value.type == DEVICE else value

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        cargs = list(args)
        n = len(cargs)
        for index, kind in self.positional:
            if index < n:
                cargs[index] = self._convert(cargs[index], kind)
        ckwargs = dict(kwargs)
        for name, kind in self.keyword:
            if name in ckwargs:
                ckwargs[name] = self._convert(ckwargs[name], kind)
        if self.generator is not None and ckwargs.get(self.generator) is None:
            ckwargs[self.generator] = _generator
        if self.writes:
            result = self._run_writes(args, kwargs, cargs, ckwargs)
        else:
            result = self.call(*cargs, **ckwargs)
        if self.all_fresh:
            return _fresh(result)
        return self._wrap(result, args, kwargs, cargs, ckwargs)

    def _run_writes(self, args: tuple, kwargs: dict, cargs: list, ckwargs: dict) -> Any:
        """Run an op that writes tensors; what the CPU op had to resize is rebound on npu.

        CPU aliases cannot grow. An empty written tensor (the usual ``out=``) runs
        as a fresh CPU tensor; an op that must grow any other (``out=`` of the wrong
        size, ``addbmm_`` broadcasting ``self``) reruns on CPU copies. Their memory
        then becomes the npu tensor's new storage, as ``resize_`` would give it.
        """
        replaced: set[int | str] = set()
        for source in self.writes:
            npu = self._pick(args, kwargs, source)
            if (
                isinstance(npu, torch.Tensor)
                and not npu.is_cpu
                and not npu.untyped_storage().nbytes()
            ):
                empty = torch.empty_strided(npu.size(), npu.stride(), dtype=npu.dtype)
                self._put(cargs, ckwargs, source, empty)
                replaced.add(source)
        try:
            result = self.call(*cargs, **ckwargs)
        except RuntimeError as err:
            if "not resizable" not in str(err):
                raise
            for source in self.writes:
                npu = self._pick(args, kwargs, source)
                if isinstance(npu, torch.Tensor) and not npu.is_cpu and source not in replaced:
                    # A fresh alias: the failed resize left the old one's sizes wrong.
                    self._put(cargs, ckwargs, source, _aliases.tensor(npu).clone())
                    replaced.add(source)
            result = self.call(*cargs, **ckwargs)
        for source in self.writes:
            npu, cpu = self._pick(args, kwargs, source), self._pick(cargs, ckwargs, source)
            if not isinstance(npu, torch.Tensor) or npu.is_cpu:
                continue
            if source in replaced:
                storage = _relabelled(cpu, _KDL_EXT_DEV).untyped_storage()
            elif (
                cpu.size() != npu.size()
                or cpu.stride() != npu.stride()
                or cpu.storage_offset() != npu.storage_offset()
            ):
                storage = npu.untyped_storage()
            else:
                continue
            _SET._op_dk(_CPU_KEY, npu, storage, cpu.storage_offset(), cpu.size(), cpu.stride())
        return result

    @staticmethod
    def _put(args: list, kwargs: dict, source: int | str, value: Any) -> None:
        if isinstance(source, str):
            kwargs[source] = value
        else:
            args[source] = value

    @staticmethod
    def _pick(args: Sequence, kwargs: dict, source: int | str) -> Any:
        if isinstance(source, str):
            return kwargs.get(source)
        return args[source] if source < len(args) else None

    def _wrap(self, result: Any, args: tuple, kwargs: dict, cargs: list, ckwargs: dict) -> Any:
        single = len(self.returns) == 1
        out = []
        for (kind, source), value in zip(
            self.returns, (result,) if single else result, strict=True
        ):
            original = None if source is None else self._pick(args, kwargs, source)
            if kind == _WRITE and original is not None:
                out.append(original)
            elif kind == _VIEW and isinstance(original, torch.Tensor) and not original.is_cpu:
                alias = self._pick(cargs, ckwargs, source)  # type: ignore[arg-type]
                if isinstance(value, torch.Tensor):
                    out.append(_view_of(original, alias, value))
                else:
                    out.append([_view_of(original, alias, v) for v in value])
            else:
                out.append(_fresh(value))
        return out[0] if single else tuple(out)


_plans: dict[OpOverload, _Plan] = {}
_plans_lock = threading.Lock()


def _fallback(op: OpOverload, *args: Any, **kwargs: Any) -> Any:
    """Run an aten op on CPU aliases of its npu arguments; refuse everything else."""
    plan = _plans.get(op)
    if plan is None:
        if op.namespace != "aten":
            raise _missing_kernel(op)
        with _plans_lock:
            plan = _plans.setdefault(op, _Plan(op))
    if torch._C._len_torch_dispatch_stack():
        # Active dispatch modes must see the npu op, not its CPU implementation.
        with _disable_current_modes():
            return plan(args, kwargs)
    return plan(args, kwargs)


def _direct_kernel(qualname: str) -> Callable[..., Any]:
    """The fallback as a registered kernel of one op (the op is resolved on first use)."""
    ns_name, _, overload = qualname.partition(".")
    name = ns_name.partition("::")[2]
    resolved: list[OpOverload] = []

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(getattr(getattr(_aten, name), overload or "default"))
        return _fallback(resolved[0], *args, **kwargs)

    return kernel


# Composites that refuse devices other than CPU/CUDA/XPU, or call a CPU DispatchStub
# on their npu argument directly (found by running torch's OpInfo samples on npu),
# and clone, hot in compiled graphs, which would otherwise be empty_like + copy_.
_DIRECT_COMPOSITES = ("aten::conj_physical_", "aten::mode.values", "aten::clone")


def _cpu_preferred() -> list[str]:
    """Aten ops that would reach npu as a composite although a CPU kernel does the job.

    Structured ops' non-functional composites allocate and then call ``out=`` (two
    trips through Python); a few ops have a generic math composite that rounds
    differently from the CPU kernel. Running the CPU kernel is faster and matches
    CPU numerics. ``as_strided_`` keeps its own kernel: it restrides ``self``.
    """
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return [
        name
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith("aten::")
        and name != "aten::as_strided_"
        and (
            has(name, "CompositeExplicitAutogradNonFunctional")
            or (has(name, "CPU") and has(name, "CompositeExplicitAutograd"))
        )
    ] + list(_DIRECT_COMPOSITES)


# --------------------------------------------------------------------------- kernels


def _empty(
    size: Sequence[int],
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
    memory_format: torch.memory_format | None = None,
) -> torch.Tensor:
    _check_index(device)
    fmt = memory_format or torch.contiguous_format
    return as_npu(torch.empty(size, dtype=dtype, memory_format=fmt))


def _empty_strided(
    size: Sequence[int],
    stride: Sequence[int],
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
) -> torch.Tensor:
    _check_index(device)
    return as_npu(torch.empty_strided(size, stride, dtype=dtype))


def _to_copy(
    self: torch.Tensor,
    *,
    dtype: torch.dtype | None = None,
    layout: torch.layout | None = None,
    device: torch.device | None = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: torch.memory_format | None = None,
) -> torch.Tensor:
    """Convert on the CPU in one step; there is no pinned memory, so never pin."""
    _check_index(device)
    to_npu = device.type == DEVICE if device is not None else not self.is_cpu
    out = _TO_COPY(_host(self), dtype=dtype, layout=layout, memory_format=memory_format)
    return as_npu(out) if to_npu else out


def _copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """Copy within or across cpu/npu on the CPU; done here so conj/neg views don't recurse."""
    _host(self).copy_(_host(src))
    return self


def _convolution(*args: Any) -> torch.Tensor:
    """``convolution_overrideable``: the hook torch leaves to devices is plain CPU conv here."""
    return _fallback(_aten.convolution.default, *args)


def _convolution_backward(
    grad_output: torch.Tensor,
    input: torch.Tensor,
    weight: torch.Tensor,
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    transposed: bool,
    output_padding: Sequence[int],
    groups: int,
    output_mask: Sequence[bool],
) -> tuple[torch.Tensor | None, ...]:
    """``convolution_backward_overrideable`` as CPU ``convolution_backward``."""
    bias_size = weight.size(1) * groups if transposed else weight.size(0)
    return _fallback(
        _aten.convolution_backward.default,
        grad_output,
        input,
        weight,
        [bias_size],
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        output_mask,
    )


# Ops whose CPU kernel only edits or builds metadata over the tensor's own storage
# (set_ also checks the storage's device matches), so it serves npu tensors as they
# are: no CPU-alias round trip, and the results share the npu storage.
_METADATA_OPS = (
    "view",
    "as_strided",
    "_reshape_alias",
    "unfold",
    "view_as_real",
    "view_as_complex",
    "set_.source_Storage_storage_offset",
    "set_.source_Storage",
    "set_.source_Tensor",
)


def _cpu_kernel(op: OpOverload) -> Callable[..., torch.Tensor]:
    """Call ``op``'s CPU kernel directly on the npu arguments."""

    def kernel(*args: Any, **kwargs: Any) -> torch.Tensor:
        return op._op_dk(_CPU_KEY, *args, **kwargs)

    return kernel


def _as_strided_(
    self: torch.Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> torch.Tensor:
    """Restride in place (the composite the squeeze_/transpose_ family ends in)."""
    offset = self.storage_offset() if storage_offset is None else storage_offset
    return _SET._op_dk(_CPU_KEY, self, self.untyped_storage(), offset, size, stride)


def _set_empty(self: torch.Tensor) -> torch.Tensor:
    """``set_()``: the CPU kernel would attach a CPU storage, so attach an npu one."""
    empty = torch.empty((0,), dtype=torch.uint8, device=DEVICE).untyped_storage()
    return _SET._op_dk(_CPU_KEY, self, empty, 0, (0,), ())


def _resize_(
    self: torch.Tensor, size: Sequence[int], *, memory_format: torch.memory_format | None = None
) -> torch.Tensor:
    """Grow into a bigger npu buffer (old bytes kept), then restride with the CPU kernel."""
    numel = math.prod(size)
    needed = (self.storage_offset() + numel) * self.element_size() if numel else 0
    storage = self.untyped_storage()
    if needed > storage.nbytes():
        grown = torch.empty((needed,), dtype=torch.uint8, device=DEVICE)
        _aliases.tensor(grown)[: storage.nbytes()].copy_(_aliases.tensor(_bytes_of(self)))
        _SET._op_dk(
            _CPU_KEY,
            self,
            grown.untyped_storage(),
            self.storage_offset(),
            self.size(),
            self.stride(),
        )
    return _RESIZE._op_dk(_CPU_KEY, self, size, memory_format=memory_format)


_native_storage_new = torch.UntypedStorage.__new__


def _storage_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``UntypedStorage(..., device="npu")``: torch would use a null allocator and crash."""
    device = kwargs.get("device")
    if device is None or torch.device(device).type != DEVICE:
        return _native_storage_new(cls, *args, **kwargs)
    _check_index(torch.device(device))
    if kwargs.get("allocator") is not None:
        raise NpuDeviceError(f"{DEVICE} storages cannot take a custom allocator")
    if not args:
        return torch.empty((0,), dtype=torch.uint8, device=DEVICE).untyped_storage()
    if isinstance(args[0], int) and len(args) == 1:
        return torch.empty((args[0],), dtype=torch.uint8, device=DEVICE).untyped_storage()
    cpu = _native_storage_new(cls, *args)
    return torch.empty((0,), dtype=torch.uint8).set_(cpu).to(DEVICE).untyped_storage()


# --------------------------------------------------------------------------- torch.npu

_generator = torch.Generator()  # npu random ops draw from this, seeded by torch.manual_seed


class _DeviceContext:
    """``torch.npu.device(i)``: there is one card, so only checks the index."""

    def __init__(self, device: Any) -> None:
        _set_device(device)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _set_device(device: Any) -> None:
    if device is None or isinstance(device, int):
        index = device
    else:
        index = torch.device(device).index
    if index is not None and index != 0:
        _check_index(torch.device(DEVICE, index))


def _manual_seed(seed: int) -> None:
    _generator.manual_seed(int(seed))


def _seed() -> None:
    _generator.seed()


def _get_rng_state(device: Any = DEVICE) -> torch.Tensor:
    return _generator.get_state()


def _set_rng_state(state: torch.Tensor, device: Any = DEVICE) -> None:
    _generator.set_state(state)


def _build_module() -> types.ModuleType:
    """The module that becomes ``torch.npu``; other runtime pieces add to it."""
    module = types.ModuleType(f"torch.{DEVICE}", "Emulated Ascend npu device (opsdk, CPU memory).")
    api: dict[str, Any] = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "init": lambda: None,
        "_lazy_init": lambda: None,
        "_is_in_bad_fork": lambda: False,
        "device_count": lambda: 1,
        "current_device": lambda: 0,
        "set_device": _set_device,
        "device": _DeviceContext,
        "synchronize": lambda device=None: None,
        "get_device_name": lambda device=None: "Emulated NPU (opsdk, CPU memory)",
        "manual_seed": _manual_seed,
        "manual_seed_all": _manual_seed,
        "seed": _seed,
        "seed_all": _seed,
        "initial_seed": _generator.initial_seed,
        "get_rng_state": _get_rng_state,
        "set_rng_state": _set_rng_state,
        "get_rng_state_all": lambda: [_get_rng_state()],
        "set_rng_state_all": lambda states: _set_rng_state(states[0]),
        "get_amp_supported_dtype": lambda: [torch.float16, torch.bfloat16],
        "is_bf16_supported": lambda: True,
    }
    for name, value in api.items():
        setattr(module, name, value)
    return module


class _Hooks(torch._C._acc.PrivateUse1Hooks):
    """What torch asks a registered backend before using it: always there."""

    def is_available(self) -> bool:
        return True

    def has_primary_context(self, dev_id: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class _Guard(torch._C._acc.DeviceGuard):
    """Device guard for a single card: nothing to switch."""

    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.PrivateUse1


# --------------------------------------------------------------------------- install

_installed: dict[str, Any] = {}
_install_lock = threading.Lock()


def is_installed() -> bool:
    """Whether ``install()`` has made ``npu`` a device in this process."""
    return "module" in _installed


def npu_module() -> types.ModuleType:
    """``torch.npu`` of the emulated device (installing it first)."""
    install()
    return _installed["module"]


def install() -> None:
    """Make ``npu`` a device backed by CPU memory; idempotent, process-wide, no undo."""
    with _install_lock:
        if is_installed():
            return
        name = torch._C._get_privateuse1_backend_name()
        if name != "privateuseone" or hasattr(torch, DEVICE):
            raise NpuDeviceError(
                f"cannot emulate the {DEVICE} device: PrivateUse1 is already named '{name}' "
                f"or torch.{DEVICE} exists (is the real torch_npu loaded?)"
            )
        module = _build_module()
        torch.utils.backend_registration._setup_privateuseone_for_python_backend(
            DEVICE, backend_module=module, hook=_Hooks(), device_guard=_Guard()
        )
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=False, for_module=False, for_packed_sequence=False, for_storage=True
        )
        torch.UntypedStorage.__new__ = staticmethod(_storage_new)  # type: ignore[method-assign]
        kernels = torch.library.Library("aten", "IMPL")
        for qualname in _cpu_preferred():
            kernels.impl(qualname.partition("::")[2], _direct_kernel(qualname), "PrivateUse1")
        kernels.impl("empty.memory_format", _empty, "PrivateUse1")
        kernels.impl("empty_strided", _empty_strided, "PrivateUse1")
        kernels.impl("copy_", _copy_, "PrivateUse1")
        kernels.impl("_to_copy", _to_copy, "PrivateUse1")
        kernels.impl("resize_", _resize_, "PrivateUse1")
        kernels.impl("set_", _set_empty, "PrivateUse1")
        kernels.impl("as_strided_", _as_strided_, "PrivateUse1")
        kernels.impl("convolution_overrideable", _convolution, "PrivateUse1")
        kernels.impl("convolution_backward_overrideable", _convolution_backward, "PrivateUse1")
        for qualname in _METADATA_OPS:
            name, _, overload = qualname.partition(".")
            op = getattr(getattr(_aten, name), overload or "default")
            kernels.impl(qualname, _cpu_kernel(op), "PrivateUse1")
        fallback = torch.library.Library("_", "IMPL")
        fallback.fallback(_fallback, "PrivateUse1")
        _installed.update(module=module, libraries=(kernels, fallback))
