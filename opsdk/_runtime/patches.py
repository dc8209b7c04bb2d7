"""Every patch opsdk applies to a private torch, TorchAir or torch_npu API, in one place.

Each is a small function saying what it patches, why, and the version it was
checked against; the callers (the npu device install, the TorchAir bring-up)
apply them at the moment they need them. A new torch or torch-npu release is
checked here first.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import torch

__all__ = [
    "aot_calls_replaced",
    "builtin_patterns_off",
    "ge_compile_hooked",
    "ge_converter_wrapped",
    "ge_graphs_seen",
    "ge_first_run_hooked",
    "guard_profiling_skipped",
    "npu_storage_constructor",
    "npugraph_ex_config_defaults",
    "pattern_passes_observed",
    "npugraph_ex_graphs_hooked",
    "npugraph_ex_graphs_seen",
    "run_torchair_patches_first",
    "setup_privateuse1_backend",
]

# Modules whose backends call AOT Autograd through their own global name for it (an NPU
# host may import TorchAir's and npugraph_ex's under torch_npu.dynamo too).
_AOT_CALLERS = tuple(
    f"{prefix}{name}"
    for name in (
        "torch._dynamo.backends.common",
        "torchair.npu_fx_compiler",
        "npugraph_ex.npu_fx_compiler",
    )
    for prefix in ("", "torch_npu.dynamo.")
)


def npu_storage_constructor() -> None:
    """Replace ``torch.UntypedStorage.__new__`` so ``UntypedStorage(n, device="npu")``
    allocates through the emulated device (other devices go to torch's own).

    Why: torch builds a storage for a Python PrivateUse1 backend with a null
    allocator, which crashes. Checked against torch 2.13.0.
    """
    from opsdk._runtime.npu._memory import DEVICE, NpuDeviceError, check_index

    native = torch.UntypedStorage.__new__

    def storage_new(cls: type, *args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device")
        if device is None or torch.device(device).type != DEVICE:
            return native(cls, *args, **kwargs)
        check_index(torch.device(device))
        if kwargs.get("allocator") is not None:
            raise NpuDeviceError(f"{DEVICE} storages cannot take a custom allocator")
        if not args:
            return torch.empty((0,), dtype=torch.uint8, device=DEVICE).untyped_storage()
        if isinstance(args[0], int) and len(args) == 1:
            return torch.empty((args[0],), dtype=torch.uint8, device=DEVICE).untyped_storage()
        cpu: torch.UntypedStorage = native(cls, *args)
        return torch.empty((0,), dtype=torch.uint8).set_(cpu).to(DEVICE).untyped_storage()

    torch.UntypedStorage.__new__ = staticmethod(storage_new)  # type: ignore[method-assign]


def setup_privateuse1_backend(name: str, module: types.ModuleType, hooks: Any, guard: Any) -> None:
    """Name PrivateUse1 ``name`` with ``module`` as ``torch.npu`` through torch's private
    ``torch.utils.backend_registration._setup_privateuseone_for_python_backend``, and
    generate the ``UntypedStorage.npu()``-style methods.

    Why: it is the one entry point that registers a Python backend's hooks and device
    guard together. Checked against torch 2.13.0.
    """
    torch.utils.backend_registration._setup_privateuseone_for_python_backend(
        name, backend_module=module, hook=hooks, device_guard=guard
    )
    torch.utils.generate_methods_for_privateuse1_backend(
        for_tensor=False, for_module=False, for_packed_sequence=False, for_storage=True
    )


def run_torchair_patches_first(torchair: types.ModuleType, config: Any) -> None:
    """Run TorchAir's one-time patches of torch before npugraph_ex's copy of them.

    Why: both register a Python kernel for ``aten.to.other`` under AutogradPrivateUse1.
    npugraph_ex skips the registration when it finds one; TorchAir does not, so a
    process that compiled with npugraph_ex first failed its first GE compile
    ("Trying to override a python impl"). Creating a GE backend (``config``: the GE
    column's own) applies TorchAir's patches. Checked against torch-npu 2.13.0.
    """
    torchair.get_npu_backend(compiler_config=config)


def builtin_patterns_off(pattern_util: types.ModuleType) -> tuple[str, ...]:
    """torch_npu's own fusion patterns are no longer registered by ``pattern_util`` (npugraph_ex's
    or TorchAir's ``patterns.pattern_util``); those registered through ``register_replacement``
    still apply. Returns the registration functions turned off.

    Why: ``_apply_pattern_passes`` registers them before each pass, and their replacements
    call ``torch.ops.npu.*`` kernels that exist only with torch_npu installed; offline the
    pass runs for op packages' own patterns only. Checked against torch-npu 2.13.0.
    """
    names = tuple(n for n in vars(pattern_util) if n.startswith("_register_"))
    for name in names:
        setattr(pattern_util, name, _registers_nothing)
    return names


# What observes the fusion passes now (:func:`pattern_passes_observed`), innermost last,
# and each pass manager class wrapped for them, with its own ``apply_pass``.
_pass_observers: list[Callable[[str, Any, Any], None]] = []
_unobserved: dict[type, Callable] = {}


@contextlib.contextmanager
def pattern_passes_observed(on_pass: Callable[[str, Any, Any], None]) -> Iterator[None]:
    """While active, each fusion pass npugraph_ex or TorchAir applies calls
    ``on_pass(backend, before, after)``: copies of the graph module as the pass got it and
    as it left it (later passes rewrite the graph itself; a copy shares its tensors).
    Blocks nest: each pass is copied once for every block active.

    Why: neither hands out the graph around ``_PatternPassManager.apply_pass``, the
    one place their pattern passes run. Checked against torch-npu 2.13.0.
    """
    wrapped = []  # the classes this block wrapped (an outer block wrapped the others)
    for name in ("npugraph_ex", "torchair"):
        module = sys.modules.get(f"{name}.patterns.pattern_pass_manager")
        if module is not None and module._PatternPassManager not in _unobserved:
            cls = module._PatternPassManager
            _unobserved[cls] = cls.apply_pass
            cls.apply_pass = _observed(name, cls.apply_pass)
            wrapped.append(cls)
    _pass_observers.append(on_pass)
    try:
        yield
    finally:
        _pass_observers.remove(on_pass)
        for cls in wrapped:
            cls.apply_pass = _unobserved.pop(cls)


def _observed(name: str, apply_pass: Callable) -> Callable:
    def observed_apply_pass(self, fx_graph):
        before = _copied(fx_graph)
        try:
            return apply_pass(self, fx_graph)
        finally:
            after = _copied(fx_graph)
            for on_pass in list(_pass_observers):
                on_pass(name, before, after)

    return observed_apply_pass


def _copied(graph_module: Any) -> Any:
    """A graph module with a copy of ``graph_module``'s graph (nodes' meta shared). Lazy
    (torch's ``_LazyGraphModule``): its code is generated only if it is called or read,
    which most copies never are (a pass's observers count nodes)."""
    from torch.fx._lazy_graph_module import _LazyGraphModule

    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(graph_module.graph, {}))
    return _LazyGraphModule(graph_module, graph)


def _registers_nothing(*args: object, **kwargs: object) -> None:
    return None


def npugraph_ex_config_defaults(config_class: Any, defaults: dict[str, Any]) -> None:
    """Every npugraph_ex ``CompilerConfig`` made after this starts with ``defaults``;
    options set later (``torch.compile(options=...)``) still win.

    Why: torch_npu's ``backend="npugraph_ex"`` (``torch_npu.dynamo._exec``) builds a
    fresh config per graph, with no way to change a default.
    Checked against torch-npu 2.13.0.
    """
    original = config_class.__init__

    @functools.wraps(original)
    def init(self, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        for name, value in defaults.items():
            setattr(self, name, value)

    config_class.__init__ = init


@contextlib.contextmanager
def ge_compile_hooked(on_first_compile: Callable[[Any], None]) -> Iterator[None]:
    """While active, TorchAir's ``GeConcreteGraph.compile`` calls ``on_first_compile(graph)``
    before it compiles a graph for the first time.

    Why: TorchAir has no hook that hands out the GE graphs it builds; a Python one
    works the same offline and on an NPU host. Checked against torch-npu 2.13.0.
    """
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    original = GeConcreteGraph.compile

    def compile_hooked(self):
        if not self._is_compiled:
            on_first_compile(self)
        return original(self)

    GeConcreteGraph.compile = compile_hooked
    try:
        yield
    finally:
        GeConcreteGraph.compile = original


@contextlib.contextmanager
def _methods_hooked(cls: type, names: tuple[str, ...], on_call: Callable) -> Iterator[None]:
    """While active, each method of ``cls`` in ``names`` calls ``on_call(self)`` first."""
    originals = {name: getattr(cls, name) for name in names}

    def hooked(original):
        @functools.wraps(original)
        def method(self, *args: Any, **kwargs: Any) -> Any:
            on_call(self)
            return original(self, *args, **kwargs)

        return method

    for name, original in originals.items():
        setattr(cls, name, hooked(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(cls, name, original)


def ge_graphs_seen(on_graph: Callable[[Any], None]) -> contextlib.AbstractContextManager:
    """While active, TorchAir's ``GeConcreteGraph`` calls ``on_graph(graph)`` when it saves
    the FX graph it converts (``save_fx_graph``, before conversion) and on each ``compile``
    (its first run hands the GE graph to the engine), possibly more than once per graph.

    Why: TorchAir hands out no graph it builds; a cell's pictures need the one its case
    ran, compiled by the cell or on a trace shared with another column (compiled when
    first run), and one whose conversion failed. Checked against torch-npu 2.13.0.
    """
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    return _methods_hooked(GeConcreteGraph, ("save_fx_graph", "compile"), on_graph)


def npugraph_ex_graphs_seen(on_graph: Callable[[Any], None]) -> contextlib.AbstractContextManager:
    """While active, npugraph_ex's ``AclConcreteGraph`` calls ``on_graph(graph)`` when it
    saves the FX graph it captures (``save_fx_graph``) and when its first run generates
    the code that runs it (``codegen``).

    Why: as :func:`ge_graphs_seen`, for npugraph_ex (whose graphs of a shared trace are
    built in another column's cell). Checked against torch-npu 2.13.0.
    """
    from npugraph_ex._acl_concrete_graph.fx2acl_converter import AclConcreteGraph

    return _methods_hooked(AclConcreteGraph, ("save_fx_graph", "codegen"), on_graph)


@contextlib.contextmanager
def ge_first_run_hooked(on_first_run: Callable[[Any], None]) -> Iterator[None]:
    """While active, TorchAir's ``GeConcreteGraph`` calls ``on_first_run(graph)`` on its first
    run, once its runtime updates are applied and before it loads the graph into GE.

    Why: ``opsdk audit`` takes the GE graph TorchAir built without loading or running it
    (it has no kernel); TorchAir loads before it compiles, so :func:`ge_compile_hooked`
    comes too late. Checked against torch-npu 2.13.0.
    """
    from torchair._ge_concrete_graph.fx2ge_converter import GeConcreteGraph

    original = GeConcreteGraph.update_graph_with_runtime

    @functools.wraps(original)
    def hooked(self, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        if not self._is_compiled:
            on_first_run(self)
        return result

    GeConcreteGraph.update_graph_with_runtime = hooked
    try:
        yield
    finally:
        GeConcreteGraph.update_graph_with_runtime = original


@contextlib.contextmanager
def npugraph_ex_graphs_hooked(on_graph: Callable[[Any], None]) -> Iterator[None]:
    """While active, npugraph_ex's ``AclConcreteGraph`` calls ``on_graph(graph)`` once built
    (its ``config`` is the ``CompilerConfig`` it runs with).

    Why: npugraph_ex hands out no graph it builds, and a profile must prove its options
    reached the graph. Checked against torch-npu 2.13.0.
    """
    from npugraph_ex._acl_concrete_graph.fx2acl_converter import AclConcreteGraph

    original = AclConcreteGraph.__init__

    @functools.wraps(original)
    def init(self, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        on_graph(self)

    AclConcreteGraph.__init__ = init
    try:
        yield
    finally:
        AclConcreteGraph.__init__ = original


@contextlib.contextmanager
def ge_converter_wrapped(op: Any, wrap: Callable[[Callable], Callable]) -> Iterator[None]:
    """While active, the converter TorchAir registered for ``op`` (its private
    ``op._ge_converter``, carrying ``require_meta``) is ``wrap(converter)``; an op
    without one is left alone.

    Why: checking what a converter returns needs every call of it, and TorchAir looks
    the converter up on the op at each call. Checked against torch-npu 2.13.0.
    """
    original = getattr(op, "_ge_converter", None)
    if original is None:
        yield
        return
    wrapped: Any = functools.wraps(original)(wrap(original))  # TorchAir's attribute on it
    wrapped.require_meta = original.require_meta
    op._ge_converter = wrapped
    try:
        yield
    finally:
        op._ge_converter = original


@contextlib.contextmanager
def aot_calls_replaced(replacement: Callable) -> Iterator[None]:
    """While active, ``aot_module_simplified`` is ``replacement`` in the modules whose
    backends call AOT Autograd through their own global for it: Dynamo's common
    backends, TorchAir's and npugraph_ex's ``npu_fx_compiler``.

    Why: a shared trace records the backends' AOT requests instead of running them,
    and those modules bind the name at import. Checked against torch 2.13.0 and
    torch-npu 2.13.0.
    """
    # Looked up by name, not found by scanning sys.modules: this runs per backend and case.
    callers = [sys.modules[name] for name in _AOT_CALLERS if name in sys.modules]
    callers = [module for module in callers if hasattr(module, "aot_module_simplified")]
    originals = [module.aot_module_simplified for module in callers]
    for module in callers:
        vars(module)["aot_module_simplified"] = replacement
    try:
        yield
    finally:
        for module, original in zip(callers, originals, strict=True):
            vars(module)["aot_module_simplified"] = original


@contextlib.contextmanager
def guard_profiling_skipped() -> Iterator[None]:
    """While active, Dynamo's private ``torch._dynamo.guards.profile_guard_manager``
    reports 0 us instead of timing each guard set it builds.

    Why: it flushes the CPU cache first, 15-60 ms per compile on a loaded 2-core
    machine, a third or more of compiling a one-op graph, for one compile metric
    (``guard_latency_us``) no check reads. Guards are still built, installed and
    evaluated on every call exactly as before. Checked against torch 2.13.0.
    """
    import torch._dynamo.guards as guards

    with mock.patch.object(guards, "profile_guard_manager", _no_latency):
        yield


def _no_latency(*args: object) -> float:
    return 0.0
