"""What an audit reads of an op library: each op with its schema, Meta function,
converter and cases, and the CANN prototypes its converters build.

:func:`load` reads ``torch_npu`` from the wheel (:mod:`opsdk.audit.torch_npu`): its
schemas defined, its Meta functions and TorchAir's own converters registered unchanged,
the ``REG_OP`` s parsed; any other target is an op package as ``opsdk check`` loads it.
Every op is served by the Meta-backed stand-in kernel (:mod:`opsdk.audit.standin`): the
audit runs no kernel of its own.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from opsdk._runtime import spec
from opsdk.audit import cases as audit_cases
from opsdk.audit import prototypes, repository, standin
from opsdk.errors import OpsdkError
from opsdk.harness.run import fingerprint

__all__ = ["AuditOp", "Library", "Source", "fake_function_at", "load", "placeholder"]


@dataclass(frozen=True)
class Source:
    """A place in the library's real source: ``path:line``."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class AuditOp:
    """One overload under audit. ``cases`` are opsdk ``Support`` s; ``origin`` says where
    they came from (``declared``: TorchAir's ``declare_supported`` or the package's specs;
    ``defined``: the dtype rows of the op's ``--ir`` definition; ``derived``: the schema;
    ``searched``: then changed until the Meta function took it), and
    ``no_case`` why there are none. An op read from a repository
    (:mod:`opsdk.audit.repository`) has where its schema is, what its sources say wrong
    (``findings``, the ``registry`` check's) and, when its Meta did not build, why its
    other checks cannot run (``unchecked``); a name registered without a schema, or
    whose schema is malformed, is an op with no overload (``op`` None) and its ``spec``."""

    op: torch._ops.OpOverload | None
    qualname: str
    meta: Source | None
    converter: Source | None
    cases: list = field(default_factory=list)
    origin: str = "derived"
    no_case: str = ""
    left: str = ""  # why a case TorchAir declares was left out
    searched: bool = False  # the derived case went through opsdk.audit.search
    schema_at: Source | None = None
    findings: list[str] = field(default_factory=list)
    unchecked: str = ""
    spec: object = None  # an OpSpec, for an op with no overload


@dataclass
class Library:
    """The ops of one library, with its CANN prototypes (``reg_op(op_type)``: the
    ``CannOp``, None when unknown) and the reinplace pairs (``(functional, inplace,
    mutated_arg indexes, Source)``) it declares."""

    name: str
    ops: list[AuditOp]
    reg_op: Callable[[str], object] = lambda op_type: None
    # how a finding names the definition of an op type it was checked against
    definition: Callable[[str], str] = lambda op_type: f"its REG_OP({op_type})"
    pairs: list = field(default_factory=list)
    schemas: dict = field(default_factory=dict)  # op name -> schema text, as the library has it
    sources: str = ""  # the digest of the files read (what a cached result depends on)
    infer_roots: tuple[Path, ...] = ()  # the --ir paths, searched for C++ inference
    # What keeps the registrations alive (a torch Library deregisters when collected).
    keep: list = field(default_factory=list, repr=False)
    from_sources: bool = False  # read from a repository's sources (opsdk.audit.repository)
    said: list[str] = field(default_factory=list)  # one line per file that did not load


def placeholder(qualname: str, source: Source, finding: str) -> AuditOp:
    """An op the library names but cannot define (no schema, a malformed one): its only
    cell is the ``registry`` check's, failing with ``finding``."""
    from opsdk._runtime.spec import OpSpec

    namespace, _, name = qualname.partition("::")
    base, _, overload = name.partition(".")
    op = AuditOp(None, qualname, None, None, no_case=finding)
    op.spec = OpSpec(namespace, base, overload, (), (), name)
    op.schema_at, op.findings = source, [finding]
    return op


def load(target: str, ir=(), only: str | None = None, defines=()) -> Library:
    """The library ``target`` names: ``torch_npu`` (read from the wheel), a repository
    whose C++ registers ops (:mod:`opsdk.audit.repository`; ``defines``: the macros its
    build sets), else an op package as ``opsdk check`` loads one (a directory or an
    importable module). The
    CANN definitions in ``ir`` (files or folders, :mod:`opsdk.audit.prototypes`) are the
    GE side's prototypes, before the library's own. ``only`` (a qualname) reads just
    that op of torch_npu, as an ``--isolate`` child needs."""
    found = prototypes.read(ir) if ir else {}  # a wrong path is refused before the import
    if target == "torch_npu":
        library = _torch_npu(only)
    elif repository.holds_library(Path(target)):
        library = repository.load(Path(target), repository.parse_defines(defines))
    else:
        library = _package(target, {t: p.op for t, p in found.items()})
    if not found:
        return library
    prototypes.register(found)
    own, own_definition = library.reg_op, library.definition
    return dataclasses.replace(
        library,
        reg_op=lambda op_type: found[op_type].op if op_type in found else own(op_type),
        definition=lambda op_type: (
            f"its {found[op_type].format} ({found[op_type].source})"
            if op_type in found
            else own_definition(op_type)
        ),
        sources=fingerprint.digest([Path(p) for p in ir]) + library.sources,
        infer_roots=tuple(Path(p) for p in ir),
    )


def _package(target: str, definitions: dict) -> Library:
    """An op library's ops with their fake functions and TorchAir converters as
    registered, the GE IR it registers through opsdk (the prototypes its converters
    build), and the cases its specs declare (else derived, from the dtype rows of the op's
    one of ``definitions``: :func:`opsdk.audit.cases.attach`). The ops are its ``OPS``
    (an opsdk package), else every op its import defines (a library of ``torch.library``
    definitions). The stand-in kernel serves the calls, over the library's own: the
    audit runs no kernel."""
    from opsdk._runtime.device import ensure_npu
    from opsdk.harness.run import target as check_target
    from opsdk.offline.torchair import import_torchair_stack

    ensure_npu()
    import_torchair_stack()  # a library may import torchair (to register converters) at import
    before = set(torch._C._dispatch_get_all_op_names())
    package = check_target.load(target)
    ops, libraries = [], {}
    for op in _ops_of(package, before):
        qualname = spec.of(op).qualname
        namespace = qualname.split("::")[0]
        lib = libraries.setdefault(namespace, torch.library.Library(namespace, "IMPL"))
        with warnings.catch_warnings():  # over the package's own kernels, as it means to
            warnings.simplefilter("ignore")
            standin.register(lib, op)
        converter = getattr(op, "_ge_converter", None)
        audit_op = AuditOp(op, qualname, fake_function_at(op), _defined_at(converter))
        audit_cases.attach(audit_op, definitions)
        ops.append(audit_op)
    home = Path(package.__file__).resolve()
    return Library(
        package.__name__,
        ops,
        _ir_def,
        definition=lambda op_type: f"its IR definition ({op_type}, registered by the package)",
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


def fake_function_at(op) -> Source | None:
    """Where ``op``'s Python fake function is defined, None without one."""
    fake = torch._library.simple_registry.singleton.find(spec.of(op).qualname).fake_impl.kernel
    return _defined_at(fake and fake.func)


def _defined_at(fn) -> Source | None:
    """Where a Python function is defined (through decorators' wrappers)."""
    if fn is None:
        return None
    fn = _through_torch(inspect.unwrap(fn))
    try:
        return Source(inspect.getsourcefile(fn), inspect.getsourcelines(fn)[1])
    except (OSError, TypeError):
        return None


def _through_torch(fn):
    """The function torch's own wrapper closes over (``register_fake`` wraps a fake
    function in ``_check_pystubs_once``'s ``inner``), else ``fn``."""
    torch_dir = Path(torch.__file__).parent
    code = getattr(fn, "__code__", None)
    if code is None or not Path(code.co_filename).is_relative_to(torch_dir):
        return fn
    inner = [v for v in map(_contents, fn.__closure__ or ()) if inspect.isfunction(v)]
    return _through_torch(inspect.unwrap(inner[0])) if len(inner) == 1 else fn


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


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
    schemas = {}
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
        standin.register(lib, op)
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
        lambda op_type: f"its REG_OP({op_type}), as TorchAir documents it,",
        pairs,
        schemas,
        sources,
        keep=[lib, meta],
    )
    for op in ops:
        audit_cases.attach(op)
    return library


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
