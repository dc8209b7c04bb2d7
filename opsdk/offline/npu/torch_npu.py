"""A stand-in for the parts of torch_npu that npugraph_ex and TorchAir's acl graphs use.

Offline, torch_npu cannot be imported: its native layer needs CANN. npugraph_ex
and TorchAir's ``reduce-overhead`` mode import it and use ``torch_npu.npu`` (which
IS ``torch.npu``, as with real torch_npu), graph capture (:mod:`opsdk.offline.npu.graphs`),
streams and events (:mod:`opsdk.offline.npu.streams`), storage-from-pointer
helpers and a few device queries. :func:`install` registers this as
``torch_npu`` (plus the submodules that code imports) and adds those APIs onto
the emulated device's ``torch.npu`` module; everything above the native layer
is the real npugraph_ex/TorchAir code.

The module carries :data:`~opsdk.offline.locator.STANDIN_MARKER`, so it
is never mistaken for an installed torch_npu. With a ``torch_npu`` module present
TorchAir also imports its native ``torchair.core._npu_graph_executor``; a
stand-in for it is registered too.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import Any

import torch
from packaging.version import Version

from opsdk.errors import OpFault
from opsdk.offline import locator as torchair_locator
from opsdk.offline.npu import device as npu_device
from opsdk.offline.npu import graphs as npu_graph
from opsdk.offline.npu import streams as npu_streams
from opsdk.runtime.device import ensure_npu

MODULE_NAME = "torch_npu"
CANN_VERSION = "8.5.0"
"""The CANN version the emulated device reports; TorchAir and npugraph_ex gate
version-dependent graph passes on it."""
FORMAT_ND = 2  # torch_npu's ACL_FORMAT_ND: the emulated device keeps every tensor in ND
# An Atlas A2 card's AI (cube) and vector core counts, which core-limit APIs report.
CORE_LIMITS = {"cube_core_num": 24, "vector_core_num": 48}


class TorchNpuStandinError(OpFault, RuntimeError):
    """The stand-in cannot be installed (a real torch_npu is present)."""


# --------------------------------------------------------------------------- torch.npu additions


class _Hf32:
    """``torch.npu.matmul`` / ``torch.npu.conv``: whether HF32 is allowed (torch_npu's defaults)."""

    def __init__(self, allow_hf32: bool):
        self.allow_hf32 = allow_hf32


_deterministic_level = 0
_stream_limits: dict[int, dict[str, int]] = {}


def _get_deterministic_level() -> int:
    """torch_npu keeps its level consistent with ``torch.use_deterministic_algorithms``."""
    global _deterministic_level
    enabled = torch.are_deterministic_algorithms_enabled()
    if _deterministic_level == 0 and enabled:
        _deterministic_level = 1
    elif _deterministic_level >= 1 and not enabled:
        _deterministic_level = 0
    return _deterministic_level


def set_deterministic_level(level: int) -> None:
    global _deterministic_level
    torch.use_deterministic_algorithms(level >= 1)
    _deterministic_level = level


def get_device_limit(device: int) -> dict[str, int]:
    return dict(CORE_LIMITS)


def get_stream_limit(stream: npu_streams.Stream) -> dict[str, int]:
    return dict(_stream_limits.get(stream.stream_id, CORE_LIMITS))


def set_stream_limit(stream: npu_streams.Stream, cube_num: int = -1, vector_num: int = -1) -> None:
    limits = _stream_limits.setdefault(stream.stream_id, dict(CORE_LIMITS))
    if cube_num != -1:
        limits["cube_core_num"] = cube_num
    if vector_num != -1:
        limits["vector_core_num"] = vector_num


def synchronize(device: Any = None) -> None:
    npu_graph.check_host_sync("torch.npu.synchronize()")


def empty_cache() -> None:
    """Emulated memory goes back to the host allocator when freed: there is no cache."""


def memory_snapshot(mempool_id: Any = None) -> list:
    """No caching allocator, so no segments (npugraph_ex logs this at debug level)."""
    return []


def get_cann_version(module: str = "CANN") -> str:
    return CANN_VERSION


def _cann_version(version: str) -> Version:
    """CANN spells release candidates ``8.3.RC1``: before ``8.3.0``, as in PEP 440."""
    return Version(version.replace(".RC", "rc").replace("RC", "rc"))


def _is_gte_cann_version(version: str, module: str = "CANN") -> bool:
    return _cann_version(CANN_VERSION) >= _cann_version(version)


def _utils_module() -> types.ModuleType:
    utils = types.ModuleType("torch_npu.npu.utils", "CANN version queries (emulated CANN).")
    utils.get_cann_version = get_cann_version
    utils._is_gte_cann_version = _is_gte_cann_version
    return utils


def _extend_npu_module(npu: types.ModuleType, utils: types.ModuleType) -> None:
    """Add the torch_npu APIs npugraph_ex and TorchAir call on ``torch.npu``."""
    api = {
        "Stream": npu_streams.Stream,
        "Event": npu_streams.Event,
        "ExternalEvent": npu_streams.ExternalEvent,
        "current_stream": npu_streams.current_stream,
        "default_stream": npu_streams.default_stream,
        "set_stream": npu_streams.set_stream,
        "stream": npu_streams.stream,
        "synchronize": synchronize,
        "NPUGraph": npu_graph.NPUGraph,
        "graph": npu_graph.graph,
        "graph_pool_handle": npu_graph.graph_pool_handle,
        "get_device_limit": get_device_limit,
        "get_stream_limit": get_stream_limit,
        "set_stream_limit": set_stream_limit,
        "_get_deterministic_level": _get_deterministic_level,
        "set_deterministic_level": set_deterministic_level,
        "matmul": _Hf32(False),
        "conv": _Hf32(True),
        "empty_cache": empty_cache,
        "memory_snapshot": memory_snapshot,
        "utils": utils,
    }
    for name, value in api.items():
        setattr(npu, name, value)


# --------------------------------------------------------------------------- torch_npu, its _C


def get_npu_format(tensor: torch.Tensor) -> int:
    return FORMAT_ND


def get_storage_size(tensor: torch.Tensor) -> int:
    """Elements in the tensor's storage (torch_npu's storage size, in ND format)."""
    return tensor.untyped_storage().nbytes() // tensor.element_size()


def _tensor_from_storage_and_metadata(
    metadata: dict, storage: torch.UntypedStorage
) -> torch.Tensor:
    """torch_npu's ``_construct_NPU_Tensor_From_Storage_And_Metadata``."""
    out = torch.empty((0,), dtype=metadata["dtype"], device=storage.device)
    out.set_(storage, metadata["storage_offset"], metadata["size"], metadata["stride"])
    out.requires_grad_(bool(metadata.get("requires_grad", False)))
    return out


def _get_checkpoint_state(device: int, pool: Any) -> tuple[int, Any]:
    """An opaque memory-pool checkpoint, as ``_npu_getCheckpointState`` returns."""
    return (device, pool)


def _set_checkpoint_pool_state(
    device: int, state: tuple[int, Any], stale_storages: list, storages_to_add_deleter: list
) -> None:
    """Nothing to restore: the emulated pool never hands a live block to another tensor,
    and storages rebuilt from a data pointer already own their memory (see npu_graph)."""


def _c_module() -> types.ModuleType:
    c = types.ModuleType("torch_npu._C", "The native entry points acl graphs use, emulated.")
    c._construct_storage_from_data_pointer = npu_graph.storage_from_data_pointer
    c._construct_NPU_Tensor_From_Storage_And_Metadata = _tensor_from_storage_and_metadata
    c._npu_getCheckpointState = _get_checkpoint_state
    c._npu_setCheckpointPoolState = _set_checkpoint_pool_state
    return c


def _dynamo_package() -> types.ModuleType:
    """``torch_npu.dynamo``, whose submodules (``_deterministic_guard``) are the real files
    in the extracted wheel; its ``__init__`` is not run (it needs torch_npu's native init)."""
    dynamo = types.ModuleType("torch_npu.dynamo")
    dynamo.__path__ = [str(torchair_locator.locate().path)]
    return dynamo


def _npu_graph_executor_module() -> types.ModuleType:
    executor = types.ModuleType(
        "torchair.core._npu_graph_executor", "TorchAir's NPU executor hooks, emulated."
    )

    def GetNpuStorageSizes(tensor: torch.Tensor) -> list[int]:  # noqa: N802 - native name
        if tensor.is_contiguous() and tensor.storage_offset() == 0:
            if tensor.numel() == get_storage_size(tensor):
                return list(tensor.size())
        return [get_storage_size(tensor)]

    executor.GetNpuStorageSizes = GetNpuStorageSizes
    return executor


# --------------------------------------------------------------------------- install

_install_lock = threading.Lock()


def is_installed() -> bool:
    module = sys.modules.get(MODULE_NAME)
    return module is not None and getattr(module, torchair_locator.STANDIN_MARKER, False)


def install() -> types.ModuleType:
    """Install this stand-in as ``torch_npu`` over the emulated npu device; idempotent.

    Offline only: refuses when the process has a real torch_npu.
    """
    with _install_lock:
        if is_installed():
            return sys.modules[MODULE_NAME]
        if MODULE_NAME in sys.modules or ensure_npu().real:
            raise TorchNpuStandinError(
                "a real torch_npu is loaded: use it; the offline stand-in is for hosts without one"
            )
        npu = npu_device.npu_module()
        utils = _utils_module()
        _extend_npu_module(npu, utils)
        module = types.ModuleType(MODULE_NAME, __doc__)
        setattr(module, torchair_locator.STANDIN_MARKER, True)
        module.npu = npu
        module._C = _c_module()
        module.dynamo = _dynamo_package()
        module.get_npu_format = get_npu_format
        module.get_storage_size = get_storage_size
        sys.modules.update(
            {
                MODULE_NAME: module,
                "torch_npu._C": module._C,
                "torch_npu.npu": npu,
                "torch_npu.npu.utils": utils,
                "torch_npu.dynamo": module.dynamo,
                "torchair.core._npu_graph_executor": _npu_graph_executor_module(),
            }
        )
        return module
