"""``torch_npu._C`` offline: the native entry points torch_npu's Python calls.

torch_npu's native module binds CANN (device, streams, graph capture, options,
memory pools). Offline, :func:`module` builds its stand-in from the emulated
device: :mod:`~opsdk._runtime.npu.streams` (streams, events),
:mod:`~opsdk._runtime.npu.capture` (graph capture and replay) and the small entry
points below. Only what torch_npu's ``npu/utils.py``, ``npu/streams.py``,
``npu/graphs.py``, ``npu/npu_config.py``, ``npu/memory.py``, npugraph_ex and
TorchAir call is here; anything else is an AttributeError naming the native
function, as with a torch_npu built without that feature.
"""

from __future__ import annotations

import threading
import types
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:  # packaging is the tools extra's: op packages import this with torch alone
    from packaging.version import Version

from opsdk._runtime.npu import capture, streams
from opsdk._runtime.npu._memory import DEVICE, check_index

CANN_VERSION = "8.5.0"
"""The CANN version the emulated device reports; TorchAir and npugraph_ex gate
version-dependent graph passes on it."""
# An Atlas A2 card's AI (cube) and vector core counts, by torch_npu's resource type
# (0 cube, 1 vector), which core-limit APIs report.
CORE_LIMITS = (24, 48)

_options: dict[str, bytes] = {}
_stream_limits: dict[tuple[int, int], int] = {}
_deterministic = {"level": 0}
_lock = threading.Lock()


def _cann_version(version: str) -> Version:
    """CANN spells release candidates ``8.3.RC1``: before ``8.3.0``, as in PEP 440."""
    from packaging.version import Version

    return Version(version.replace(".RC", "rc").replace("RC", "rc"))


def is_gte_cann_version(version: str, module: str = "CANN") -> bool:
    return _cann_version(CANN_VERSION) >= _cann_version(version)


def _set_device(index: int) -> None:
    if index != 0:
        check_index(torch.device(DEVICE, index))


def _exchange_device(index: int) -> int:
    """``_npu_maybeExchangeDevice``: select ``index``, return the previous device."""
    _set_device(index)
    return 0


def _set_option(options: dict[str, str]) -> None:
    with _lock:
        _options.update({k: str(v).encode() for k, v in options.items()})


def _get_option(name: str) -> bytes | None:
    return _options.get(name)


def _set_stream_res_limit(
    stream_id: int, device_index: int, device_type: int, type: int, value: int
) -> None:
    _stream_limits[(stream_id, type)] = value


def _get_stream_res_limit(stream_id: int, device_index: int, device_type: int, type: int) -> int:
    return _stream_limits.get((stream_id, type), CORE_LIMITS[type])


def _reset_stream_res_limit(stream_id: int, device_index: int, device_type: int) -> None:
    for kind in range(len(CORE_LIMITS)):
        _stream_limits.pop((stream_id, kind), None)


def _tensor_from_storage_and_metadata(
    metadata: dict, storage: torch.UntypedStorage
) -> torch.Tensor:
    """``_construct_NPU_Tensor_From_Storage_And_Metadata``."""
    out = torch.empty((0,), dtype=metadata["dtype"], device=storage.device)
    out.set_(storage, metadata["storage_offset"], metadata["size"], metadata["stride"])
    out.requires_grad_(bool(metadata.get("requires_grad", False)))
    return out


def _checkpoint_state(device: int, pool: Any) -> tuple[int, Any]:
    """``_npu_getCheckpointState``: an opaque state of a graph memory pool."""
    return (device, pool)


def _set_checkpoint_pool_state(
    device: int, state: tuple[int, Any], stale_storages: list, storages_to_add_deleter: list
) -> None:
    """Nothing to restore: the emulated pool never hands a live block to another tensor,
    and storages rebuilt from a data pointer already own their memory (see capture)."""


def _memory_snapshot(mempool_id: Any = None) -> dict:
    """No caching allocator, so no segments (npugraph_ex logs this at debug level)."""
    return {"segments": [], "device_traces": []}


def _noop(*args: Any, **kwargs: Any) -> None:
    """A native call with nothing to do on the emulated device (caches, dumps)."""


def module() -> types.ModuleType:
    """A new ``torch_npu._C`` stand-in module."""
    c = types.ModuleType("torch_npu._C", __doc__)
    natives = {
        # streams and events (torch_npu/npu/streams.py, utils.py)
        "_NPUStreamBase": streams._NPUStreamBase,
        "_NPUEventBase": streams._NPUEventBase,
        "_npu_getCurrentStream": streams.get_current_stream,
        "_npu_getDefaultStream": streams.get_default_stream,
        "_npu_setStream": streams.set_stream,
        "_npu_synchronize": streams.synchronize,
        # graphs (torch_npu/npu/graphs.py)
        "_NPUGraph": capture.NPUGraphBase,
        "_graph_pool_handle": capture.graph_pool_handle,
        "_npu_isCurrentStreamCapturing": streams.is_current_stream_capturing,
        "_graph_task_group_begin": capture.task_group_begin,
        "_graph_task_group_end": capture.task_group_end,
        "_graph_task_update_begin": capture.task_update_begin,
        "_graph_task_update_end": capture.task_update_end,
        "_super_kernel_scope_begin": _noop,
        "_super_kernel_scope_end": _noop,
        "_weak_ref_tensor": torch.Tensor.detach,
        # memory pools and storage (npugraph_ex's acl graphs)
        "_construct_storage_from_data_pointer": capture.storage_from_data_pointer,
        "_construct_NPU_Tensor_From_Storage_And_Metadata": _tensor_from_storage_and_metadata,
        "_npu_getCheckpointState": _checkpoint_state,
        "_npu_setCheckpointPoolState": _set_checkpoint_pool_state,
        "_npu_emptyCache": _noop,
        "_npu_hostEmptyCache": _noop,
        "_npu_memorySnapshot": _memory_snapshot,
        # device, options, versions, core limits (utils.py, npu_config.py)
        "_npu_getDevice": lambda: 0,
        "_npu_getDeviceWithoutSet": lambda: 0,
        "_npu_setDevice": _set_device,
        "_npu_maybeExchangeDevice": _exchange_device,
        "_npu_is_bf16_supported": lambda: True,
        "_get_cann_version": lambda module="CANN": CANN_VERSION,
        "_is_gte_cann_version": is_gte_cann_version,
        "_npu_setOption": _set_option,
        "_npu_getOption": _get_option,
        "_npu_get_device_res_limit": lambda device, type: CORE_LIMITS[type],
        "_npu_set_stream_res_limit": _set_stream_res_limit,
        "_npu_get_stream_res_limit": _get_stream_res_limit,
        "_npu_reset_stream_res_limit": _reset_stream_res_limit,
        "_npu_get_deterministic_level": lambda: _deterministic["level"],
        "_npu_set_deterministic_level": lambda level: _deterministic.update(level=level),
    }
    for name, value in natives.items():
        setattr(c, name, value)
    return c
