"""Attach graph-mode pieces to an op defined elsewhere, registering only what is missing.

An attached package (``opsdk new --attach ns::op``) serves an op whose schema and npu
kernel another library registers: torch_npu or op-plugin on an NPU host, a C++
extension, or nobody (offline, where the package's reference serves the emulated npu
device). Each helper asks the dispatcher (or TorchAir's converter registry) whether the
piece exists, and registers the package's only when it does not, so importing the
package never redefines nor overrides what the op's own library registered. These are
also the questions ``opsdk coverage`` asks.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable

import torch
import torch.utils._pytree as pytree
from torch._library import custom_ops, simple_registry

from opsdk._runtime import spec
from opsdk.errors import SpecError

__all__ = ["define", "has_fake", "has_kernel", "impl", "register_converter", "register_fake"]

# Keys whose kernel serves every backend: an op with one needs no device kernel.
COMPOSITE = ("CompositeImplicitAutograd", "CompositeExplicitAutograd")


def _qualname(lib: torch.library.Library, name: str) -> str:
    return f"{lib.ns}::{name}"


def is_defined(qualname: str) -> bool:
    """The dispatcher holds a schema for ``ns::name[.overload]``."""
    base, _, overload = qualname.partition(".")
    return any(s.overload_name == overload for s in spec.registered_schemas(base))


def has_kernel(qualname: str, key: str) -> bool:
    """A kernel is registered for the dispatch key itself (not a fallback)."""
    return torch._C._dispatch_has_kernel_for_dispatch_key(qualname, key)


def has_fake(qualname: str) -> bool:
    """The op has a fake (``register_fake``) or a Meta or composite kernel to trace with."""
    opdef = custom_ops.OPDEFS.get(qualname)
    if opdef is not None:  # custom_op's own Meta kernel raises until a fake is given
        return opdef._abstract_fn is not None
    if simple_registry.singleton.find(qualname).fake_impl.kernel is not None:
        return True
    return any(has_kernel(qualname, k) for k in ("Meta", "CompositeImplicitAutograd"))


def define(
    lib: torch.library.Library, schema: str, tags: torch.Tag | Iterable[torch.Tag] = ()
) -> bool:
    """``lib.define(schema, tags=tags)`` unless the op is already defined; True when it
    defined it. Defined already with another schema, the package's pieces (fake, specs,
    converter) were written for an op that is not this one: :class:`SpecError`."""
    name = schema[: schema.index("(")]
    qualname = _qualname(lib, name)
    if is_defined(qualname):
        _check_same(qualname, schema)
        return False
    lib.define(schema, tags=tags)
    return True


def _check_same(qualname: str, schema: str) -> None:
    """The schema registered for ``qualname`` reads as the package's ``schema``."""
    base, _, overload = qualname.partition(".")
    mine = torch._C.parse_schema(f"{base.partition('::')[0]}::{schema}")
    [registered] = [s for s in spec.registered_schemas(base) if s.overload_name == overload]
    if str(registered) != str(mine):
        raise SpecError(
            f"{qualname} is registered as `{registered}`, but this package was written for "
            f"`{mine}`: make schema.py's the registered one (opsdk new --attach {base} "
            "without --schema reads it), then its fake function and specs"
        )


def impl(lib: torch.library.Library, name: str, kernel: Callable, key: str) -> bool:
    """``lib.impl(name, kernel, key)`` unless the op has a kernel for ``key`` (or a
    composite one); True when it registered ``kernel``. For ``PrivateUse1`` the kernel
    is the reference standing in for the op's own npu kernel (offline): its new outputs
    are made contiguous, as an aclnn kernel's are."""
    qualname = _qualname(lib, name)
    if any(has_kernel(qualname, k) for k in (key, *COMPOSITE)):
        return False
    lib.impl(name, _as_device_kernel(kernel) if key == "PrivateUse1" else kernel, key)
    return True


def _as_device_kernel(kernel: Callable) -> Callable:
    """``kernel`` with contiguous new outputs; an input it returns (written in place)
    is returned as it is."""

    @functools.wraps(kernel)
    def device_kernel(*args, **kwargs):
        inputs = {id(t) for t in pytree.tree_leaves((args, kwargs))}
        fresh = lambda t: t if id(t) in inputs else t.contiguous()  # noqa: E731
        return pytree.tree_map_only(torch.Tensor, fresh, kernel(*args, **kwargs))

    return device_kernel


def register_fake(op, *, lib: torch.library.Library) -> Callable[[Callable], Callable]:
    """Decorator: ``torch.library.register_fake(op)`` unless the op has a fake (torch_npu
    registers Meta kernels with ``Library("npu", "IMPL", "Meta")``)."""

    def register(fn: Callable) -> Callable:
        if not has_fake(op.name()):
            torch.library.register_fake(op, fn, lib=lib)
        return fn

    return register


def registered_converter(op) -> Callable | None:
    """The TorchAir converter registered for ``op``, after TorchAir's own (its converters
    for torch_npu's ops, which it loads when first asked); TorchAir must be imported."""
    from torchair._ge_concrete_graph import fx2ge_converter

    with warnings.catch_warnings():  # offline, torch_npu's ops are missing: each one warns
        warnings.simplefilter("ignore")
        from torchair._ge_concrete_graph.ge_converter import custom  # noqa: F401
    found = getattr(op, "_ge_converter", None)
    return found if found is not None else fx2ge_converter._CONVERTERS.get(op)


def register_converter(op) -> Callable[[Callable], Callable]:
    """Decorator: ``torchair.register_fx_node_ge_converter(op)`` unless TorchAir has a
    converter for the op already (its own for a torch_npu op)."""
    import torchair

    def register(fn: Callable) -> Callable:
        if registered_converter(op) is None:
            torchair.register_fx_node_ge_converter(op)(fn)
        return fn

    return register
