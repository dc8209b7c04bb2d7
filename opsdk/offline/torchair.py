"""TorchAir bring-up: import TorchAir and npugraph_ex over the stand-ins, the offline
config, and npugraph_ex (aclgraph capture-and-replay) as a Dynamo backend.

Offline, TorchAir's one native module, ``torchair.core._torchair``, is replaced by
:mod:`opsdk.offline.ge.standin`, and torch_npu's native layer by
:mod:`opsdk._runtime.npu.native` under torch_npu's real Python
(:mod:`opsdk._runtime.npu.torch_npu`), before TorchAir is imported from the cache
:mod:`opsdk._runtime.locator` fills.

``backend="npugraph_ex"`` is torch_npu's, registered by its ``torch_npu.dynamo``
package as on an NPU host: a fresh ``CompilerConfig`` with ``mode="npugraph_ex"``
per graph, then npugraph_ex's ``get_npu_backend``. The fusion pass
(``pattern_fusion_pass``, :data:`OFFLINE_OPTIONS`) runs offline as on a host, but for
the op packages' own patterns only (:mod:`opsdk._runtime.patterns`): torch_npu's
built-in ones are not registered offline (:data:`OFFLINE_PATTERNS`), because they
rewrite graphs to ``torch.ops.npu.*`` kernels that only a real torch_npu has
(:func:`opsdk._runtime.patches.builtin_patterns_off`).

The older TorchAir spelling, ``CompilerConfig.mode = "reduce-overhead"`` with
``torchair.get_npu_backend``, runs TorchAir's own copy of the acl-graph code and
is available as :func:`reduce_overhead_backend`.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from opsdk._runtime import locator as torchair_locator
from opsdk._runtime import patches, patterns
from opsdk._runtime.converters import load_pending
from opsdk._runtime.device import ensure_npu
from opsdk._runtime.signals import handlers_kept

OFFLINE_OPTIONS: dict[str, Any] = {"pattern_fusion_pass": True}
"""npugraph_ex ``CompilerConfig`` options opsdk sets offline (the user's options win)."""
OFFLINE_PATTERNS = (
    "the op packages' own (opsdk.patterns) only: torch_npu's built-in patterns are off "
    "offline, their replacements call torch.ops.npu.* kernels that only torch_npu has"
)
"""Which fusion patterns the pass applies offline, and why, for reports."""

_lock = threading.Lock()
_torchair: ModuleType | None = None
# TorchAir imports all its converters of torch_npu's own ops at once (the first time a
# converter is missing, or an op package imports one of them) and warns for each op
# that does not exist. Offline torch_npu's ops never do: a hundred lines that bury the
# report. An op package's own import of such a converter still fails loudly.
_OFFLINE_ONLY_WARNING = r"Failed to import torchair\._ge_concrete_graph\.ge_converter\.custom\."
# TorchAir imports torch._inductor, which imports torch.utils.mkldnn, whose ScriptModule
# classes raise this deprecation 14 times at import: torch's own, about no op.
_TORCH_IMPORT_DEPRECATION = r"`torch\.jit\.script_method` is deprecated"


def is_offline() -> bool:
    """True when npugraph_ex runs over the stand-in, False on an NPU host with torch_npu."""
    return not ensure_npu().real


def import_torchair_stack() -> ModuleType:
    """TorchAir, with the torch_npu stand-in installed first when offline (TorchAir and
    npugraph_ex decide at import time whether torch_npu is there)."""
    if is_offline():
        from opsdk._runtime.npu import torch_npu as torch_npu_standin

        torch_npu_standin.install()
    else:
        importlib.import_module("torch_npu")
    return import_torchair()


def import_torchair() -> ModuleType:
    """Import TorchAir once per process and return the module.

    Offline this fetches the wheel on first need, installs the ``_torchair``
    stand-in (TorchAir's ``TorchNpuGraph`` takes its base class from it at import
    time, so it must come first) and imports TorchAir from the cache: through
    torch_npu's lazy ``torchair`` module once the torch_npu stand-in is installed
    (:func:`import_torchair_stack`), else as a top-level package.
    """
    global _torchair
    if _torchair is not None:
        return _torchair
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", _TORCH_IMPORT_DEPRECATION, DeprecationWarning)
        importlib.import_module("torch.utils.mkldnn")
    if torchair_locator.locate().mode == "real":
        _torchair = importlib.import_module("torchair")
        return _torchair
    path = torchair_locator.fetch()  # also byte-compiles an entry fetched before opsdk did
    from opsdk.offline.ge import standin as torchair_standin

    torchair_standin.install()
    warnings.filterwarnings("ignore", message=_OFFLINE_ONLY_WARNING, category=UserWarning)
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
    with handlers_kept():
        module = importlib.import_module("torchair")
    if module.__file__ is None or not Path(module.__file__).is_relative_to(path):
        raise torchair_locator.TorchairUnavailable(
            f"another torchair ({module.__file__}) is already imported; "
            "let opsdk import TorchAir first (opsdk.offline.torchair.import_torchair())"
        )
    _own_patterns_only("torchair", module)
    _torchair = module
    return _torchair


@functools.cache
def torchair_with_converters() -> ModuleType:
    """TorchAir, imported once per process as on an NPU host, with every op package's
    waiting converter loaded (:func:`opsdk._runtime.converters.load_pending`)."""
    module = import_torchair_stack()
    load_pending()
    return module


@functools.cache
def import_npugraph_ex() -> ModuleType:
    """The npugraph_ex package: torch_npu's on an NPU host, the wheel's offline (through
    torch_npu's lazy ``npugraph_ex`` module), with :data:`OFFLINE_OPTIONS` offline.

    Importing it installs SIGINT/SIGTERM handlers that run its finalizer and then
    ignore the signal; offline there is nothing on a device to finalize, and they are
    refused, as TorchAir's (:mod:`opsdk._runtime.signals`).
    """
    import_torchair_stack()
    _apply_torchair_patches_first()
    if not is_offline():
        return importlib.import_module("npugraph_ex")
    with handlers_kept():
        module = importlib.import_module("npugraph_ex")
    patches.npugraph_ex_config_defaults(module.CompilerConfig, OFFLINE_OPTIONS)
    _own_patterns_only("npugraph_ex", module)
    return module


def _own_patterns_only(name: str, module: ModuleType) -> None:
    """The backend's fusion pass, offline, with the op packages' patterns and none of
    torch_npu's (:data:`OFFLINE_PATTERNS`)."""
    patches.builtin_patterns_off(importlib.import_module(f"{name}.patterns.pattern_util"))
    patterns.connect(name, module)


def torchair_config(mode: str):
    """A TorchAir ``CompilerConfig`` in ``mode``, with :data:`OFFLINE_OPTIONS` offline."""
    config = import_torchair_stack().CompilerConfig()
    config.mode = mode
    if is_offline():  # TorchAir's spelling of OFFLINE_OPTIONS
        config.experimental_config.pattern_fusion_pass = OFFLINE_OPTIONS["pattern_fusion_pass"]
    return config


@functools.cache
def _apply_torchair_patches_first() -> None:
    """Once per process: :func:`opsdk._runtime.patches.run_torchair_patches_first`."""
    patches.run_torchair_patches_first(import_torchair_stack(), torchair_config("max-autotune"))


def describe() -> dict[str, Any]:
    """Which npugraph_ex runs against which torch_npu, for reports: where the locator says it
    is, imported or not (a report imports nothing and fetches nothing: it is written even
    when TorchAir cannot be had, and after a run the cell cache served whole)."""
    offline = is_offline()
    where = torchair_locator.locate()
    npugraph_ex = where.path / "npugraph_ex" / "__init__.py"
    return {
        "npugraph_ex": str(npugraph_ex) if where.fetched else f"not fetched ({npugraph_ex})",
        "torch_npu": "opsdk capture stand-in" if offline else "installed torch_npu",
        "options": dict(OFFLINE_OPTIONS) if offline else {},
        "patterns": OFFLINE_PATTERNS if offline else "torch_npu's and the op packages'",
    }


def get_backend(**options: Any) -> Callable:
    """torch_npu's npugraph_ex backend with these ``CompilerConfig`` options, e.g.
    ``get_backend(force_eager=True)``; ``torch.compile(..., options=...)`` still
    applies per call and wins."""
    install()
    dynamo = importlib.import_module("torch_npu.dynamo")

    def npugraph_ex_backend(gm, example_inputs, **kwargs):
        merged = {**options, **kwargs.pop("options", {})}
        return dynamo._exec(gm, example_inputs, options=merged, **kwargs)

    return npugraph_ex_backend


def install() -> None:
    """Make ``torch.compile(backend="npugraph_ex")`` work; idempotent.

    On an NPU host torch_npu registers the name itself and nothing is done here.
    Offline torch_npu's Python registers it (installed with the torch_npu stand-in),
    and npugraph_ex is imported with :data:`OFFLINE_OPTIONS` as its defaults.
    """
    if is_offline():
        import_npugraph_ex()


def reduce_overhead_backend(**options: Any) -> Callable:
    """TorchAir's ``mode = "reduce-overhead"`` backend, with npugraph_ex-named options
    (``force_eager``, ``capture_limit``, ...) that TorchAir maps onto its config."""
    torchair = import_torchair_stack()
    backend = torchair.get_npu_backend(compiler_config=torchair_config("reduce-overhead"))
    return functools.partial(backend, options=options) if options else backend
