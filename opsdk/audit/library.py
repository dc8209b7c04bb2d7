"""What an audit reads of an op library: each op with its schema, Meta function,
converter and cases, and the CANN prototypes its converters build.

:func:`load` reads ``torch_npu`` from the wheel (:mod:`opsdk.audit.torch_npu`): its
schemas defined, its Meta functions and TorchAir's own converters registered unchanged,
the ``REG_OP`` s parsed; any other target is an op package as ``opsdk check`` loads it.
Every op is served by the Meta-backed stand-in kernel (:mod:`opsdk.audit.meta_kernel`): the
audit runs no kernel of its own.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import warnings
from pathlib import Path

import torch

from opsdk._runtime import spec
from opsdk.audit import cases as audit_cases
from opsdk.audit import meta_kernel, prototypes, repository
from opsdk.audit.model import AuditOp, Library, Source, defined_at, fake_function_at
from opsdk.errors import OpsdkError
from opsdk.harness.run import fingerprint

__all__ = ["AuditOp", "Library", "load"]


def load(target: str | tuple[str, ...], ir=(), only: str | None = None, defines=()) -> Library:
    """The library ``target`` names: ``torch_npu`` (read from the wheel), a repository
    whose C++ registers ops (:mod:`opsdk.audit.repository`; ``defines``: the macros its
    build sets), else an op package as ``opsdk check`` loads one (a directory or an
    importable module), or the ops of several such targets as one library. The
    CANN definitions in ``ir`` (files or folders, :mod:`opsdk.audit.prototypes`) are the
    GE side's prototypes, before the library's own. ``only`` (a qualname) reads just
    that op of torch_npu, as an ``--isolate`` child needs."""
    from opsdk.offline.ge import standin as ge_standin

    found = prototypes.read(ir) if ir else {}  # a wrong path is refused before the import
    ge_standin.know_standard_ops(_standard_ir)  # as an NPU host's CANN knows them
    targets = (target,) if isinstance(target, str) else tuple(target)
    if targets == ("torch_npu",):
        library = _torch_npu(only)
    elif "torch_npu" in targets:
        raise OpsdkError("torch_npu is audited on its own: give it as the only target")
    elif len(targets) == 1 and repository.holds_library(Path(targets[0])):
        library = repository.load(
            Path(targets[0]),
            repository.parse_defines(defines),
            {t: p.op for t, p in found.items()},
        )
    else:
        library = _packages(targets, {t: p.op for t, p in found.items()}, tuple(map(Path, ir)))
    if not found:
        return library
    prototypes.register(found)
    own, own_definition = library.reg_op, library.definition

    def reg_op(op_type: str):
        if op_type not in found:
            return own(op_type)
        prototypes.used(found[op_type])  # its warnings, in the cell that reads it
        return found[op_type].op

    return dataclasses.replace(
        library,
        reg_op=reg_op,
        definition=lambda op_type: (
            f"its {found[op_type].format} ({found[op_type].source})"
            if op_type in found
            else own_definition(op_type)
        ),
        sources=fingerprint.digest([Path(p) for p in ir]) + library.sources,
        infer_roots=tuple(Path(p) for p in ir),
        unused=lambda: prototypes.unused(found),
    )


def _packages(targets: tuple[str, ...], definitions: dict, infer_roots=()) -> Library:
    """The ops of every target as one library, each op once, with the first target that
    has it: the ops a target's import defines are counted from the first import on, so
    a target an earlier one imported already still finds its own."""
    from opsdk._runtime.device import ensure_npu
    from opsdk.offline.torchair import import_torchair_stack

    ensure_npu()
    import_torchair_stack()  # a library may import torchair (to register converters) at import
    before = set(torch._C._dispatch_get_all_op_names())
    claimed: set[str] = set()
    first, *more = [_package(t, definitions, before, claimed, infer_roots) for t in targets]
    if not more:
        return first
    every = [first, *more]
    return dataclasses.replace(
        first,
        name=" ".join(library.name for library in every),
        ops=[op for library in every for op in library.ops],
        sources="".join(library.sources for library in every),
        keep=[kept for library in every for kept in library.keep],
    )


def _package(
    target: str, definitions: dict, before: set[str], claimed: set[str], infer_roots=()
) -> Library:
    """An op library's ops with their fake functions and TorchAir converters as
    registered, the GE IR it registers through opsdk (the prototypes its converters
    build), and the cases its specs declare (else derived, from the dtype rows of the op's
    one of ``definitions``: :func:`opsdk.audit.cases.attach`). The ops are its ``OPS``
    (an opsdk package), else every op its import defines (a library of ``torch.library``
    definitions). The stand-in kernel serves the calls, over the library's own: the
    audit runs no kernel. ``before``: the ops defined before the library's import;
    ``claimed``: the qualnames an earlier target has (left out here, then added to)."""
    from opsdk.harness.run import target as check_target

    package = check_target.load(target)
    ops = []
    libraries: dict[str, torch.library.Library] = {}
    for op in _ops_of(package, before):
        qualname = spec.of(op).qualname
        if qualname in claimed:
            continue
        claimed.add(qualname)
        namespace = qualname.split("::")[0]
        lib = libraries.setdefault(namespace, torch.library.Library(namespace, "IMPL"))
        with warnings.catch_warnings():  # over the package's own kernels, as it means to
            warnings.simplefilter("ignore")
            meta_kernel.register(lib, op)
        converter = getattr(op, "_ge_converter", None)
        audit_op = AuditOp(op, qualname, fake_function_at(op), defined_at(converter))
        audit_cases.attach(audit_op, definitions, infer_roots)
        ops.append(audit_op)
    home = Path(package.__file__).resolve()
    return Library(
        package.__name__,
        ops,
        lambda op_type: _ir_def(op_type) or _reg_op(op_type),
        definition=lambda op_type: (
            f"its IR definition ({op_type}, registered by the package)"
            if _ir_def(op_type)
            else _documented(op_type)
        ),
        sources=fingerprint.digest([home.parent if home.name == "__init__.py" else home]),
        keep=list(libraries.values()),
    )


def _ops_of(package, before: set[str]) -> list:
    """The overloads ``package`` declares in ``OPS`` (checked as `opsdk check` checks
    them), else those its import defined."""
    from opsdk import harness
    from opsdk.errors import TargetError

    if getattr(package, "OPS", None):
        return harness.declared_ops(package)
    names = sorted(set(torch._C._dispatch_get_all_op_names()) - before)
    if not names:
        raise TargetError(
            f"{package.__name__} defines no op at its import and declares no OPS: point "
            "opsdk audit at the module that defines them (torch.library), or list them in "
            "OPS = (torch.ops.ns.op.default, ...)"
        )
    return [torch._library.utils.lookup_op(n if "." in n else f"{n}.default") for n in names]


def _ir_def(op_type: str):
    """The GE IR an op package registers for ``op_type``, as a ``CannOp`` (no dtypes)."""
    from opsdk._runtime import irdef
    from opsdk.cann import CannOp

    ir = irdef.lookup(op_type)
    return CannOp(ir) if ir is not None else None


_read: list[tuple[str | None, Library]] = []  # its ops are defined once per process


def _torch_npu(only: str | None) -> Library:
    """torch_npu's library (only the op ``only``, when given), read once per process."""
    if not _read:
        _read.append((only, _read_torch_npu(only)))
    [(read_for, library)] = _read
    if read_for not in (None, only):
        raise OpsdkError(f"this process read torch_npu for {read_for} alone; audit it whole")
    return library


def _read_torch_npu(only: str | None) -> Library:
    from opsdk.audit import torch_npu as wheel
    from opsdk.offline.torchair import torchair_with_converters

    torchair_with_converters()  # the torch_npu stand-in first: the Meta file imports it
    overloads = [c for c in wheel.converted() if only in (None, c.qualname)]
    names = {c.name for c in overloads}
    pairs = [
        (f, i, m, Source(str(wheel.locator.torch_npu_file(wheel.REINPLACE)), line))
        for f, i, m, line in wheel.reinplace_pairs()
        if only is None or names & {f, i}
    ]
    wanted = names | {n for f, i, _, _ in pairs for n in (f, i)}
    wanted |= {n.removesuffix("_") for n in names if n.endswith("_")}
    schemas: dict[str, str | None] = {}  # the names first, in order; then their schemas
    for c in overloads:
        schemas.setdefault(c.name if c.overload == "default" else f"{c.name}.{c.overload}", None)
    for name in sorted(wanted):
        schemas.setdefault(name, None)
    schemas = {name: wheel.schema(name) for name in schemas}
    lib = torch.library.Library("npu", "FRAGMENT")
    for name, text in schemas.items():
        if text is not None and not _defined(name):
            # torchgen tags every op whose name ends in "_" inplace; torch_npu's codegen is torchgen
            tags = (torch.Tag.inplace,) if name.split(".")[0].endswith("_") else ()
            lib.define(text, tags=tags)
    meta = _exec_meta(wheel, sorted(names))
    ops = []
    for c in overloads:
        packet = getattr(torch.ops.npu, c.name, None)
        op = getattr(packet, c.overload, None) if packet is not None else None
        if op is None:
            continue
        meta_kernel.register(lib, op)
        line = wheel.meta_line(c.name)
        ops.append(
            AuditOp(
                op,
                c.qualname,
                Source(str(wheel.locator.torch_npu_file(wheel.META)), line) if line else None,
                Source(c.path, c.line),
            )
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in sorted({c.module for c in overloads}):
            importlib.import_module(f"{wheel.CONVERTER_MODULE}.{module}")
    read = [wheel.SCHEMAS, wheel.META, wheel.CONVERTERS, wheel.GE_RAW_OPS, wheel.REINPLACE]
    sources = fingerprint.digest([wheel.locator.torch_npu_file(p) for p in read])
    library = Library(
        "torch_npu",
        ops,
        _reg_op,
        _documented,
        pairs,
        schemas,
        sources,
        keep=[lib, meta],
    )
    for op in ops:
        audit_cases.attach(op)
    return library


def _documented(op_type: str) -> str:
    return f"its REG_OP({op_type}), as TorchAir documents it,"


def _standard_ir(op_type: str):
    """A standard CANN op's IR, from TorchAir's documented ``REG_OP`` (None: not one, or
    its text does not read: the converter check says so where a node has that type)."""
    try:
        found = _reg_op(op_type)
    except OpsdkError:
        return None
    return found.ir if found else None


@functools.cache
def _reg_op(op_type: str):
    """TorchAir's documented ``REG_OP`` of ``op_type``, parsed on first need."""
    from opsdk import cann
    from opsdk.audit import torch_npu as wheel

    text = wheel.prototypes().get(op_type)
    return cann.read(text)[0] if text else None


def _defined(name: str) -> bool:
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.npu, base, None)
    return packet is not None and (overload or "default") in packet.overloads()


def _exec_meta(wheel, names) -> dict:
    """Run torch_npu's Meta registrations of ``names`` from its own file (compiled under
    its path, so a Meta function's traceback names its real line); their namespace."""
    module = ast.Module(body=wheel.meta_nodes(names), type_ignores=[])
    path = str(wheel.locator.torch_npu_file(wheel.META))
    namespace = {"__name__": "opsdk_audit_meta"}
    exec(compile(module, path, "exec"), namespace)  # noqa: S102
    return namespace
