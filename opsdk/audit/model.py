"""What an audit holds of a library: its ops (each with where its schema, Meta function
and converter are, and its cases), the library itself, and how a place in the real
source is named. :mod:`opsdk.audit.library` and :mod:`opsdk.audit.repository` read
libraries into these."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from opsdk._runtime import spec
from opsdk.cann.explore.torch_side import behind_torch

__all__ = [
    "BY_REGISTRY",
    "AuditOp",
    "Library",
    "Source",
    "defined_at",
    "fake_function_at",
    "placeholder",
]

# How a reason not to audit a cell ends when the registry check's finding says it in full.
BY_REGISTRY = " (the registry check's finding)"


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
    other checks cannot run (``unchecked``), and when it has no Meta or fake function at
    all (the ``registry`` check's finding) why the checks that trace it do not say so
    again (``untraceable``), and its Python kernels by dispatch key (``kernels``: the
    ``registry`` check runs them to see what they write); a name registered without a schema, or
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
    untraceable: str = ""
    spec: object = None  # an OpSchema, for an op with no overload
    kernels: dict = field(default_factory=dict)  # key -> (function, with_keyset, Source)


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
    # One line for the --ir definitions' warnings no cell used ("" when none).
    unused: Callable[[], str] = lambda: ""
    # What keeps the registrations alive (a torch Library deregisters when collected).
    keep: list = field(default_factory=list, repr=False)
    from_sources: bool = False  # read from a repository's sources (opsdk.audit.repository)
    said: list[str] = field(default_factory=list)  # one line per file that did not load


def placeholder(qualname: str, source: Source, finding: str) -> AuditOp:
    """An op the library names but cannot define (no schema, a malformed one): its only
    cell is the ``registry`` check's, failing with ``finding``."""
    from opsdk._runtime.spec import OpSchema

    namespace, _, name = qualname.partition("::")
    base, _, overload = name.partition(".")
    op = AuditOp(None, qualname, None, None, no_case=finding)
    op.spec = OpSchema(namespace, base, overload, (), (), name)
    op.schema_at, op.findings = source, [finding]
    return op


def fake_function_at(op) -> Source | None:
    """Where ``op``'s Python fake function is defined, None without one."""
    fake = torch._library.simple_registry.singleton.find(spec.of(op).qualname).fake_impl.kernel
    return defined_at(fake and fake.func)


def defined_at(fn) -> Source | None:
    """Where a Python function is defined (through decorators' wrappers)."""
    if fn is None:
        return None
    fn = behind_torch(fn)
    try:
        path = inspect.getsourcefile(fn)
        return Source(path, inspect.getsourcelines(fn)[1]) if path is not None else None
    except (OSError, TypeError):
        return None
