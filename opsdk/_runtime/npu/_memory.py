"""npu memory is CPU memory relabelled: DLPack capsules moved between devices without a
copy, npu storage built from a pointer, and cached CPU aliases of npu tensors."""

from __future__ import annotations

import ctypes
from typing import Any

import torch
from torch._C import DispatchKey

from opsdk.errors import OpFault

DEVICE = "npu"
_KDL_CPU = 1
KDL_EXT_DEV = 12
_DLTENSOR_DEVICE_TYPE_OFFSET = 8  # DLTensor starts with void* data, then int32 device_type
CPU = torch.device("cpu")
CPU_KEY = DispatchKey.CPU

aten = torch.ops.aten
_AS_STRIDED = aten.as_strided.default
SET = aten.set_.source_Storage_storage_offset

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


class NpuDeviceError(OpFault, RuntimeError):
    """The emulated npu device was asked for something a real one would refuse."""


def _relabel(capsule: Any, device_type: int) -> Any:
    """Rewrite a DLPack capsule's device type in place; the data stays put."""
    managed = _capsule_pointer(capsule, b"dltensor")
    ctypes.c_int32.from_address(managed + _DLTENSOR_DEVICE_TYPE_OFFSET).value = device_type
    return capsule


def _over(
    storage: torch.UntypedStorage,
    dtype: torch.dtype,
    offset: int | torch.SymInt,
    size: Any,
    stride: Any,
) -> torch.Tensor:
    """A tensor over ``storage`` (on its device) with the given dtype and geometry."""
    if storage.device.type == DEVICE:
        out = torch._C._acc.create_empty_tensor((0,), dtype)
    else:
        out = torch.empty((0,), dtype=dtype)
    return SET._op_dk(CPU_KEY, out, storage, offset, size, stride)


def bytes_of(t: torch.Tensor) -> torch.Tensor:
    """A 1-d uint8 tensor over all of ``t``'s storage (same device, same memory)."""
    storage = t.untyped_storage()
    return _over(storage, torch.uint8, 0, (storage.nbytes(),), (1,))


def relabelled(t: torch.Tensor, device_type: int) -> torch.Tensor:
    """All of ``t``'s storage as uint8, moved to the other device without a copy."""
    return torch._C._from_dlpack(_relabel(torch._C._to_dlpack(bytes_of(t)), device_type))


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
        return torch._C._from_dlpack(_relabel(torch._C._to_dlpack(cpu), KDL_EXT_DEV))
    raw = relabelled(cpu, KDL_EXT_DEV).untyped_storage()
    return _lazy_bits(_over(raw, cpu.dtype, cpu.storage_offset(), cpu.size(), cpu.stride()), cpu)


def as_cpu(npu: torch.Tensor) -> torch.Tensor:
    """A CPU tensor over ``npu``'s memory: same storage offset, sizes and strides, no copy.

    The alias's storage holds a reference to the npu memory, so the alias (and
    any view of it) stays valid after ``npu`` itself is gone.
    """
    if npu.device.type != DEVICE:
        raise NpuDeviceError(f"as_cpu expects an {DEVICE} tensor, got one on {npu.device}")
    raw = relabelled(npu, _KDL_CPU).untyped_storage()
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
        storage = torch._C._construct_storage_from_data_pointer(address, CPU, nbytes)
        flat = self._flat[key] = torch.empty((0,), dtype=dtype).set_(storage, 0, (0,), (1,))
        return flat


aliases = _AliasCache()


def host(t: torch.Tensor) -> torch.Tensor:
    return t if t.is_cpu else aliases.tensor(t)


def view_of(src: torch.Tensor, src_alias: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """The npu counterpart of CPU result ``r``: a view of ``src`` if ``r`` views it."""
    if r.untyped_storage().data_ptr() != src_alias.untyped_storage().data_ptr():
        return as_npu(r)
    if r.dtype == src.dtype:
        return _AS_STRIDED._op_dk(CPU_KEY, src, r.size(), r.stride(), r.storage_offset())
    return _over(src.untyped_storage(), r.dtype, r.storage_offset(), r.size(), r.stride())


def fresh(value: Any) -> Any:
    """Move a freshly computed CPU result onto npu without copying."""
    if isinstance(value, torch.Tensor):
        return as_npu(value)
    if isinstance(value, (list, tuple)):
        return type(value)(fresh(v) for v in value)
    return value


def check_index(device: torch.device | None) -> None:
    if device is not None and device.index not in (None, 0):
        raise NpuDeviceError(
            f"{device} does not exist: the emulated {DEVICE} device has one card, {DEVICE}:0"
        )
