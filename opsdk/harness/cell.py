"""The harness's vocabulary: cells of the matrix, their results and where their files go.

A cell is one op under one column (a backend, or an audit check) with one shape mode,
optionally in a usage context (the op inside a realistic graph: ``view``, ``chain``...)
and under an option profile (TorchAir settings users turn on); its result says pass, or
in which layer it failed and what to do next.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the reports and `opsdk report merge` read cells without torch
    from opsdk._runtime.spec import OpSchema

__all__ = [
    "Cell",
    "CellFailure",
    "CellSkipped",
    "OpUnderTest",
    "Result",
    "case_dir",
]

# "not run": an interrupted run did not reach the cell (or aborted it); never a pass.
STATUSES = ("pass", "fail", "skip", "xfail", "error", "not run")
# Where a failure happened, from the user's code outwards.
LAYERS = (
    "registry",  # what a library's sources register disagrees with its schema
    "eager",
    "schema",
    "fake",
    "autograd",
    "dynamo",
    "aot",
    "recompile",
    "converter",
    "ge-graph",
    "infer",  # the op's C++ InferShape / InferDataType disagrees with its fake
    "tiling",  # ascendc: the op's own TilingFunc failed for a case
    "kernel",  # ascendc: the op's own AscendC kernel broke a hardware limit or the numbers
    "ge-exec",
    "capture",
    "replay",
    "stale-input",
    "pattern-duplicate",  # fusion: the pattern another op registered first
    "pattern-not-fired",
    "pattern-results",  # fusion: fired, but the fused op changed the results
    "pattern-near-miss",
    "setup",
    "process",  # the op's process crashed, ran out of memory or past its time limit
)


@dataclass(frozen=True)
class OpUnderTest:
    """An op of the target package, with its parsed spec."""

    spec: OpSchema
    package: str

    @property
    def name(self) -> str:
        return self.spec.qualname

    def overload(self):
        return self.spec.op()


class _Coordinates:
    """Where a cell sits in the matrix, spelled once for cells and their results."""

    column: str
    shapes: str
    context: str | None
    profile: str | None

    @property
    def variant(self) -> str:
        """The report column: ``ge``, ``ge+frozen_parameter``, ``ge/view``."""
        variant = f"{self.column}+{self.profile}" if self.profile else self.column
        return f"{variant}/{self.context}" if self.context else variant

    @property
    def label(self) -> str:
        """``ge-dynamic``, ``ge+frozen_parameter-dynamic/view``: the cell within its op."""
        variant = f"{self.column}+{self.profile}" if self.profile else self.column
        label = f"{variant}-{self.shapes}"
        return f"{label}/{self.context}" if self.context else label

    def _id(self, op: str) -> str:
        """``ns::op[column-shapes]``, the id pytest and reports show."""
        return f"{op}[{self.label}]"


@dataclass(frozen=True)
class Cell(_Coordinates):
    op: OpUnderTest
    column: str
    shapes: str
    waiver: str | None = None  # why the cell is expected to fail (opsdk-waivers.toml)
    context: str | None = None  # a usage context; None: the op alone on whole tensors
    profile: str | None = None  # a TorchAir option profile; None: TorchAir's defaults

    @property
    def id(self) -> str:
        return self._id(self.op.name)

    def result(self, status: str, layer: str | None = None, message: str = "", **more) -> Result:
        """This cell's result (waiver not applied: see :mod:`opsdk.harness.run.waivers`)."""
        return Result(
            self.op.name,
            self.column,
            self.shapes,
            status,
            layer,
            message,
            context=self.context,
            profile=self.profile,
            **more,
        )


@dataclass(frozen=True)
class Result(_Coordinates):
    op: str
    column: str
    shapes: str
    status: str
    layer: str | None = None
    message: str = ""
    seconds: float = 0.0
    waiver: str | None = None  # the reason of the waiver that covers the cell
    context: str | None = None
    profile: str | None = None
    # What third-party code warned or logged while the cell ran, each once (harness.run.heard).
    warnings: tuple[str, ...] = ()
    cached: bool = False  # read from the cell cache (opsdk.harness.run.cache), not run now
    # What the cell's checks say beside the verdict (opsdk.harness.notes): the host
    # values each call took, say.
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "warnings", tuple(self.warnings))  # a JSON list, read back
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.status not in STATUSES or (self.layer is not None and self.layer not in LAYERS):
            raise ValueError(f"unknown status/layer {self.status!r}/{self.layer!r}")

    @property
    def id(self) -> str:
        return self._id(self.op)

    def describe(self) -> str:
        """One line: the cell, then its outcome."""
        cached = " (cached)" if self.cached else ""
        return f"{self.op} [{self.label}]{cached}: {self.outcome()}"

    def outcome(self) -> str:
        """Status, layer and message, for a report that already names the cell."""
        where = f" in layer {self.layer}" if self.layer else ""
        return f"{self.status}{where}: {self.message}" if self.message else self.status + where

    @property
    def stale_waiver(self) -> bool:
        """Waived, yet it passed: the waiver has outlived its bug and must go."""
        return self.status == "pass" and self.waiver is not None

    def to_json(self) -> dict:
        """The report's form (reports, caches, journals)."""
        return asdict(self)

    @classmethod
    def from_json(cls, entry: dict) -> Result:
        """A result of :meth:`to_json`, or of a report written before the column was
        called so (its key ``backend``): ``report merge`` reads older shards."""
        return cls(**{("column" if k == "backend" else k): v for k, v in entry.items()})


class CellFailure(Exception):
    """A check found a problem; carries the layer it belongs to, and for a rule on a
    graph the nodes it concerns (by name, with a short note: a cell's pictures mark them)."""

    def __init__(self, layer: str, message: str, marks: dict[str, str] | None = None):
        super().__init__(message)
        self.layer = layer
        self.marks = dict(marks or {})


class CellSkipped(Exception):
    """The cell would check nothing here; the message says why (a skip, never a pass)."""


def case_dir(qualname: str, label: str) -> str:
    """Where ``--dump`` puts the GE graphs of an op's cell labelled ``label``
    (:attr:`Cell.label`): ``ns.name.overload/ge-SHAPES``, ``ge+PROFILE-SHAPES`` under an
    option profile, ``ge-SHAPES-CONTEXT`` in a usage context."""
    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    return f"{namespace}.{name}.{overload or 'default'}/{label.replace('/', '-')}"
