"""torch_npu offline: its real Python from the wheel, over a stand-in for its native layer.

torch_npu cannot be imported offline: its package ``__init__`` loads the native
library, which needs CANN. :func:`install` registers instead, from the files the
offline cache keeps of the wheel (:mod:`opsdk._runtime.locator`):

- ``torch_npu`` and ``torch_npu.utils`` as package shells over the wheel's
  directories: their submodules are the real files, their ``__init__`` (native
  initialization, tools that need the native library) is not run;
- ``torch_npu._C``: :mod:`opsdk._runtime.npu.native`, the one stand-in;
- ``torch_npu.npu``: the emulated device's ``torch.npu`` (as on a host, ``torch.npu
  is torch_npu.npu``), over the wheel's ``npu/`` directory. The real ``utils``,
  ``streams``, ``graphs``, ``npu_config`` and ``memory`` modules are imported and
  give ``torch.npu`` what torch_npu's ``npu/__init__`` takes from them; the few
  functions that ``__init__`` defines itself and npugraph_ex calls are compiled
  from that file (:data:`NPU_INIT_FUNCTIONS`);
- ``torch_npu.dynamo``: the real package, whose backend registration then runs as
  torch_npu's initialization runs it: ``torch.compile(backend="npugraph_ex")``
  (and ``"npu"``) and the lazy ``torchair`` / ``npugraph_ex`` modules are torch_npu's.

The ``torch_npu`` module carries :data:`~opsdk._runtime.locator.STANDIN_MARKER`, so
it is never mistaken for an installed torch_npu. With a ``torch_npu`` module
present TorchAir also imports its native ``torchair.core._npu_graph_executor``;
a stand-in for it is registered too.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import sys
import threading
import types
import warnings

import torch

from opsdk._runtime import locator
from opsdk._runtime.npu import emulator, native
from opsdk.errors import OpFault

MODULE_NAME = "torch_npu"
# The dtypes torch_npu defines natively beyond torch's, by their enum values, as
# op-plugin's Meta file (op_plugin/meta/_meta_registrations.py) maps them: its Meta
# functions and TorchAir's converters compare an ``int`` dtype argument with them.
NPU_DTYPES = {
    "int4": 285,
    "hifloat8": 290,
    "float8_e5m2": 291,
    "float8_e4m3fn": 292,
    "float8_e8m0fnu": 293,
    "float4_e2m1fn_x2": 296,
    "float4_e1m2fn_x2": 297,
}
FORMAT_ND = 2  # torch_npu's ACL_FORMAT_ND: the emulated device keeps every tensor in ND
# torch_npu.npu modules run over the stand-in, and the names torch.npu takes from each
# (None: the module's __all__), as torch_npu's npu/__init__ imports them.
NPU_MODULES: dict[str, tuple[str, ...] | None] = {
    "utils": (
        "synchronize",
        "set_device",
        "current_device",
        "device",
        "device_of",
        "StreamContext",
        "stream",
        "set_stream",
        "current_stream",
        "default_stream",
        "_get_device_index",
    ),
    "streams": None,
    "graphs": None,
    "npu_config": None,
    "memory": ("empty_cache", "host_empty_cache", "memory_snapshot"),
}
NPU_INIT_FUNCTIONS = (
    "set_deterministic_level",
    "_sync_deterministic_level",
    "_get_deterministic_level",
)
"""Functions of torch_npu's ``npu/__init__.py`` (which cannot be imported offline) that
npugraph_ex calls, compiled from that file and run with its globals ``torch``,
``torch_npu`` and ``warnings``."""
# Whose __init__ is not run (see the module docstring).
_SHELLS = ("torch_npu", "torch_npu.utils")


class TorchNpuStandinError(OpFault, RuntimeError):
    """The stand-in cannot be installed (a real torch_npu is present)."""


def get_npu_format(tensor: torch.Tensor) -> int:
    return FORMAT_ND


def get_storage_size(tensor: torch.Tensor) -> int:
    """Elements in the tensor's storage (torch_npu's storage size, in ND format)."""
    return tensor.untyped_storage().nbytes() // tensor.element_size()


def _npu_graph_executor_module() -> types.ModuleType:
    executor = types.ModuleType(
        "torchair.core._npu_graph_executor", "TorchAir's NPU executor hooks, emulated."
    )

    def GetNpuStorageSizes(tensor: torch.Tensor) -> list[int]:  # noqa: N802 - native name
        if tensor.is_contiguous() and tensor.storage_offset() == 0:
            if tensor.numel() == get_storage_size(tensor):
                return list(tensor.size())
        return [get_storage_size(tensor)]

    vars(executor).update(GetNpuStorageSizes=GetNpuStorageSizes)
    return executor


def _shell(name: str, path) -> types.ModuleType:
    """A package module over ``path`` with a spec, as an import makes one:
    ``importlib.util.find_spec(name)`` (a library asking whether torch_npu is there)
    raises on a module in ``sys.modules`` whose ``__spec__`` is None."""
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    module.__file__ = str(path / "__init__.py")
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, origin=module.__file__)
    module.__spec__.submodule_search_locations = module.__path__
    return module


def _npu_init_functions(path, globals_: dict) -> dict:
    """:data:`NPU_INIT_FUNCTIONS`, compiled from ``path`` (torch_npu's npu/__init__.py)."""
    tree = ast.parse(path.read_text(), str(path))
    tree.body = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in NPU_INIT_FUNCTIONS
    ]
    exec(compile(tree, str(path), "exec"), globals_)
    return {name: globals_[name] for name in NPU_INIT_FUNCTIONS}


def _extend_npu_module(npu: types.ModuleType, root, torch_npu: types.ModuleType) -> None:
    """Make the emulated ``torch.npu`` torch_npu's ``npu`` package over the wheel."""
    npu.__path__ = [str(root / "npu")]
    for name, exported in NPU_MODULES.items():
        real = importlib.import_module(f"torch_npu.npu.{name}")
        for attr in real.__all__ if exported is None else exported:
            setattr(npu, attr, getattr(real, attr))
    init_globals = {"__name__": "torch_npu.npu", "torch": torch, "torch_npu": torch_npu}
    init_globals["warnings"] = warnings
    for name, function in _npu_init_functions(root / "npu" / "__init__.py", init_globals).items():
        setattr(npu, name, function)
    vars(npu).update(matmul=npu.npu_config._allowHF32Matmul(), conv=npu.npu_config._allowHF32Conv())


# --------------------------------------------------------------------------- install

_install_lock = threading.RLock()  # torch.npu's __getattr__ may install while installing


def is_installed() -> bool:
    module = sys.modules.get(MODULE_NAME)
    return module is not None and getattr(module, locator.STANDIN_MARKER, False)


def install_on_first_use(npu: types.ModuleType) -> None:
    """Give the emulated ``torch.npu`` a module ``__getattr__`` that installs torch_npu's
    Python the first time code asks for a name the device itself lacks (a kernel
    calling ``torch.npu.is_current_stream_capturing()``, say)."""

    def __getattr__(name: str):
        if name.startswith("__") or is_installed():
            raise AttributeError(f"module {npu.__name__!r} has no attribute {name!r}")
        install()
        return getattr(npu, name)

    vars(npu)["__getattr__"] = __getattr__  # PEP 562: a module's own __getattr__


def install() -> types.ModuleType:
    """Install torch_npu's Python over the native stand-in as ``torch_npu``; idempotent.

    Goes with the emulated npu device: refuses without it, or when the process has a
    real torch_npu. Fetches the wheel into the cache on first use
    (:func:`opsdk._runtime.locator.fetch`).
    """
    with _install_lock:
        if is_installed():
            return sys.modules[MODULE_NAME]
        if MODULE_NAME in sys.modules or not emulator.is_installed():
            raise TorchNpuStandinError(
                "the npu device is torch_npu's (or none is set up): the torch_npu stand-in "
                "runs over opsdk's emulated device, on hosts without torch_npu"
            )
        root = locator.fetch().parent
        npu = emulator.npu_module()
        module = _shell(MODULE_NAME, root)
        setattr(module, locator.STANDIN_MARKER, True)
        # a module built here: its attributes set through its namespace, as an import does
        vars(module).update(
            _C=native.module(),
            npu=npu,
            get_npu_format=get_npu_format,
            get_storage_size=get_storage_size,
            **NPU_DTYPES,
        )
        sys.modules.update(
            {
                MODULE_NAME: module,
                "torch_npu._C": module._C,
                "torch_npu.utils": _shell("torch_npu.utils", root / "utils"),
                "torch_npu.npu": npu,
                "torchair.core._npu_graph_executor": _npu_graph_executor_module(),
            }
        )
        vars(module)["utils"] = sys.modules["torch_npu.utils"]
        _extend_npu_module(npu, root, module)
        vars(module)["dynamo"] = importlib.import_module("torch_npu.dynamo")
        module.dynamo._register_backends()  # what torch_npu's initialization registers
        return module
