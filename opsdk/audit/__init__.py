"""``opsdk audit``: check an existing op library's schemas, Meta functions and TorchAir
converters together, offline, without a kernel (the first library: torch_npu's ops
TorchAir converts). The library is read by :mod:`opsdk.audit.library`, its cases made
by :mod:`opsdk.audit.cases` (and :mod:`opsdk.audit.search` when the Meta function
refuses them), each check is a module of :mod:`opsdk.audit.checks`, and
:mod:`opsdk.audit.matrix` turns them into the results ``opsdk check``'s reports show."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns

if TYPE_CHECKING:
    from opsdk.audit.model import AuditOp, Library

__all__ = ["AUDIT_SUITE", "REGISTRY", "Check", "CheckModule", "check_named"]

AUDIT_SUITE = "audit"  # the suite of the audit's checks in the judges' registry
REGISTRY = "registry"  # the check of what a repository's sources register


@runtime_checkable
class CheckModule(Protocol):
    """What a check's module (``opsdk.audit.checks.NAME``) defines: ``check`` judges
    ``op`` of ``library`` in the shape mode ``shapes``; it raises a finding
    (:class:`~opsdk.harness.cell.CellFailure`), or :class:`~opsdk.audit.checks.Undecided`
    where it cannot decide, and returns notes."""

    def check(self, library: Library, op: AuditOp, shapes: str) -> list[str]: ...


@dataclass(frozen=True)
class Check:
    """One check of the audit, a :class:`~opsdk.harness.columns.Judge`: its module is a
    :class:`CheckModule`; a crash in it is reported in its own layer."""

    name: str
    shape_modes: tuple[str, ...]
    suite: str = AUDIT_SUITE
    # Only for some libraries: ``"module:function"``, called with the library, says whether
    # it has cells (``infer``: when the ``--ir`` paths hold C++ inference); a light module,
    # as a column's ``selects``.
    selects: str | None = None
    # What an op must have for cells of this check: an :class:`~opsdk.audit.library.AuditOp`
    # field, None where it lacks it (``converter``: an op without one takes graph mode
    # through npugraph_ex only, which needs none).
    needs: str | None = None
    # Laid out by default only for an op that lacks this field (``npugraph_ex``: an op
    # with a converter takes GE's path; ``--checks npugraph_ex`` checks it too).
    unless: str | None = None

    @property
    def error_layer(self) -> str:
        return self.name

    def implementation(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.checks.{self.name}")

    def checker(self) -> CheckModule:
        """The check's module, held to :class:`CheckModule`."""
        module = self.implementation()
        if not isinstance(module, CheckModule):
            raise TypeError(f"{module.__name__} defines no check(library, op, shapes)")
        return module

    def applies(self, library: Library) -> bool:
        """Whether ``library``'s ops have cells of this check."""
        return columns.selected(self.selects, library)


def check_named(name: str) -> Check:
    """The audit's check ``name``, as registered below; an unknown name is an error
    naming the checks."""
    judge = columns.judge(name, AUDIT_SUITE)
    if not isinstance(judge, Check):
        raise TypeError(f"the audit's judge {name!r} is a {type(judge).__name__}")
    return judge


# The checks, each with the shape modes it runs in (the schema's do not vary).
columns.register(Check("schema", ("static",)))
columns.register(Check("fake", SHAPE_MODES))
columns.register(Check("converter", ("static", "dynamic"), needs="converter"))
columns.register(
    Check(
        "infer",
        ("static", "dynamic"),
        selects="opsdk.audit.inference:applies",
        needs="converter",
    )
)
columns.register(
    Check("ascendc", ("static",), selects="opsdk.audit.kernels:applies", needs="converter")
)
columns.register(Check("npugraph_ex", ("static", "dynamic"), unless="converter"))
columns.register(Check(REGISTRY, ("static",), selects="opsdk.audit.repository:applies"))

if TYPE_CHECKING:  # mypy holds every registered check's module to CheckModule
    from opsdk.audit.checks import (
        ascendc,
        converter,
        fake,
        infer,
        npugraph_ex,
        registry,
        schema,
    )

    MODULES: tuple[CheckModule, ...] = (
        schema,
        fake,
        converter,
        infer,
        ascendc,
        npugraph_ex,
        registry,
    )
