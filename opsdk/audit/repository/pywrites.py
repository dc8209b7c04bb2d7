"""Which inputs a library's Python kernel writes, seen by running it.

A Python kernel (a function a library registers with ``torch.library.Library.impl``)
is no text to read as :mod:`~opsdk.audit.repository.writes` reads C++: it is run,
offline, on CPU copies of the op's first case, and an input it wrote (its ``_version``
moved, or its bytes changed) is a write seen happen, certain. A kernel that cannot run
here (it needs the npu, its case does not suit it) is not checked, and said so.
"""

from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass

import torch

__all__ = ["of", "recorded", "undeclared"]

# the keys whose kernel computes the op (not its Meta, fake or autograd formula)
_RUN_KEYS = ("CPU", "PrivateUse1", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


@contextlib.contextmanager
def recorded(kernels: dict):
    """While open, each Python kernel registered for a key of :data:`_RUN_KEYS` is kept
    in ``kernels``: ``namespace::name[.overload]`` -> {key: ``(function, with_keyset)``}."""
    impl = torch.library.Library.impl

    def recording(self, op_name, fn, dispatch_key="", *args, **kwargs):
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        name = op_name if isinstance(op_name, str) else op_name.name()
        if key in _RUN_KEYS and callable(fn):
            qualname = name if "::" in name else f"{self.ns}::{name}"
            with_keyset = kwargs.get("with_keyset", args[0] if args else False)
            kernels.setdefault(qualname.removesuffix(".default"), {})[key] = (fn, with_keyset)
        return impl(self, op_name, fn, dispatch_key, *args, **kwargs)

    torch.library.Library.impl = recording  # type: ignore[method-assign]
    try:
        yield kernels
    finally:
        torch.library.Library.impl = impl  # type: ignore[method-assign]


@dataclass(frozen=True)
class _Run:
    """One Python kernel of an op run once: its key and where it is defined, the schema
    arguments it wrote (by name), or why it could not run (``refused``)."""

    key: str
    where: object  # a Source, None when unknown
    written: list[str]
    refused: str = ""


def of(kernels: dict, op, at) -> dict:
    """The Python kernels :func:`recorded` kept for ``op`` (an ``OpOverload``): key ->
    ``(function, with_keyset, where it is defined)``, named by ``at(path, line)``."""
    from opsdk._runtime import spec
    from opsdk.audit.model import defined_at

    found = {}
    own = kernels.get(spec.of(op).qualname.removesuffix(".default"), {})
    for key, (fn, with_keyset) in own.items():
        where = defined_at(_own(fn))
        found[key] = (fn, with_keyset, where and at(where.path, where.line))
    return found


def _run(op, kernels: dict, call) -> list[_Run]:
    """Each of ``op``'s Python ``kernels`` (:func:`of`), run on fresh CPU copies of
    ``call`` (a :class:`~opsdk.harness.variants.cases.Call`)."""
    from opsdk.harness.failures import first_line
    from opsdk.harness.variants.cases import on_device

    names = [a.name for a in op._schema.arguments]
    found = []
    for key, (fn, with_keyset, where) in kernels.items():
        fresh = on_device(call, "cpu")
        bound = dict(zip(names, fresh.args, strict=False)) | fresh.kwargs
        before = {name: _state(value) for name, value in bound.items()}
        keyset = (torch._C.DispatchKeySet(torch._C.DispatchKey.CPU),) if with_keyset else ()
        try:
            with torch.no_grad():
                fn(*keyset, *fresh.args, **fresh.kwargs)
        except Exception as err:  # noqa: BLE001 - a kernel that cannot run here is not checked
            found.append(_Run(key, where, [], first_line(err)))
            continue
        written = [n for n, value in bound.items() if _state(value) != before[n]]
        found.append(_Run(key, where, written))
    return found


def _state(value) -> list:
    """Per tensor in ``value`` (a tensor or a list of them): its version and bytes."""
    tensors = value if isinstance(value, (list, tuple)) else [value]
    return [
        (t._version, t.detach().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes())
        for t in tensors
        if isinstance(t, torch.Tensor)
    ]


def undeclared(audit_op) -> tuple[list[str], list[str]]:
    """The ``registry`` check's findings on ``audit_op``'s Python kernels (an input one
    wrote that the schema does not mark ``(a!)``), and its notes (a kernel not run)."""
    from opsdk._runtime import spec
    from opsdk.audit.repository.writes import marked, placed
    from opsdk.harness.variants.cases import cases

    if not audit_op.kernels:
        return [], []
    if not audit_op.cases:
        return [], [f"its Python kernel's writes are not checked: {audit_op.no_case}"]
    arguments = {a.name: a for a in audit_op.op._schema.arguments}
    call = cases(spec.of(audit_op.op), "static", "eager")[0].calls[0]
    findings, notes = [], []
    for ran in _run(audit_op.op, audit_op.kernels, call):
        kernel = f"its {ran.key} kernel{placed(ran.where)}"
        if ran.refused:
            notes.append(f"{kernel} is not checked for writes: it raised on CPU: {ran.refused}")
        for name in ran.written:
            arg = arguments[name]
            if arg.alias_info is not None and arg.alias_info.is_write:
                continue
            findings.append(
                f"{audit_op.qualname}'s Python kernel writes {name}: {kernel} changed it "
                f"when run on CPU, but the schema{placed(audit_op.schema_at)} declares "
                f"`{arg.type} {name}` unwritten: mark it {marked(arg)} (torch.compile "
                "otherwise drops the write)"
            )
    return findings, notes


def _own(fn):
    """The library's function behind ``fn``: ``torch.library.custom_op`` registers a
    closure of its own (``backend_impl``) calling the function given for the device."""
    if not inspect.isfunction(fn):
        return fn
    free = inspect.getclosurevars(fn).nonlocals
    given = getattr(free.get("self"), "_backend_fns", None)
    return given.get(free.get("device_type"), fn) if isinstance(given, dict) else fn
