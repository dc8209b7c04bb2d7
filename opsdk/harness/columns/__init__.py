"""Whatever judges a cell, in one registry: the backend columns of `opsdk check` (one
:class:`Column` each) and the checks of `opsdk audit` (:class:`opsdk.audit.Check`), each
a :class:`Judge`, by suite and name (the name cells, waivers and reports use; the JSON
key ``backend``).

A column's facts (its name, what it needs from an op, where an unexpected error
is reported, whether it compiles) are read without importing torch: the CLI
parser, ``opsdk --help`` and the pytest plugin need them. How it runs lives in
its module, imported only when one of its cells runs (compiled columns pull in
Dynamo, which eager cells never need). Adding a column is one module with a
``run(cell, dump_dir)`` function and one :func:`register` line below.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

from opsdk.axes import SHAPE_MODES
from opsdk.errors import OpsdkError

__all__ = ["Column", "Judge", "asked_in_modes", "compiling", "get", "in_modes", "names", "register"]

CHECK_SUITE = "check"  # the suite of `opsdk check`'s columns


class Judge(Protocol):
    """What the matrices know of whatever judges a cell before running it: its name, its
    suite (``check`` or ``audit``), the layer a crash in it is reported in, the shape
    modes it judges, and the module that does the judging (imported on first use)."""

    @property
    def name(self) -> str: ...

    @property
    def suite(self) -> str: ...

    @property
    def error_layer(self) -> str: ...

    @property
    def shape_modes(self) -> tuple[str, ...]: ...

    def implementation(self) -> ModuleType: ...


@dataclass(frozen=True)
class Column:
    """One backend column.

    ``module`` implements it: ``run(cell, dump_dir)`` checks one cell; a column that
    ``compiles`` also has ``lowering(spec)`` (its Dynamo backend and the checks it keeps
    active while compiling) so it can share a case's trace; an optional
    ``environment()`` says what a report records about it.
    """

    name: str
    module: str
    needs: tuple[str, ...]  # from an op, in the order a user adds them (see harness.run.coverage)
    error_layer: str  # where an error no check anticipated is reported
    compiles: bool = False  # under torch.compile: can share a case's trace
    empty_cases: bool = True  # runs cases with an empty tensor (see harness.variants.cases)
    # Columns this one leaves part of its checks to when they are in the same run.
    leaves_to: tuple[str, ...] = ()
    suite: str = CHECK_SUITE
    shape_modes: tuple[str, ...] = SHAPE_MODES
    # Only for some ops: ``"module:function"``, called with an op's spec, says which (e.g.
    # ops with a pattern); a light module, so laying out a matrix imports no column.
    selects: str | None = None
    # The graph mode (opsdk.axes.GRAPH_MODES) whose path the column checks; None: every
    # package has cells of it.
    mode: str | None = None

    def implementation(self) -> ModuleType:
        return importlib.import_module(self.module)

    def run(self, cell, dump_dir=None) -> None:
        self.implementation().run(cell, dump_dir)

    def lowering(self, spec):
        """The Dynamo backend, and a context factory for the checks kept while compiling."""
        return self.implementation().lowering(spec)

    def applies(self, spec) -> bool:
        """Whether the op ``spec`` has cells in this column."""
        if self.selects is None:
            return True
        module, _, function = self.selects.partition(":")
        return getattr(importlib.import_module(module), function)(spec)

    def environment(self) -> dict:
        describe = getattr(self.implementation(), "environment", None)
        return describe() if describe is not None else {}


_registry: dict[tuple[str, str], Judge] = {}


def register(judge: Judge) -> Judge:
    """Add ``judge`` after those of its suite registered before it (the matrix's order)."""
    if (judge.suite, judge.name) in _registry:
        raise ValueError(f"{judge.name!r} is registered already among the {judge.suite} judges")
    _registry[judge.suite, judge.name] = judge
    return judge


def names(suite: str = CHECK_SUITE) -> tuple[str, ...]:
    """The names of the suite's judges (default: check's columns), in matrix order."""
    return tuple(name for kind, name in _registry if kind == suite)


def get(name: str, suite: str = CHECK_SUITE) -> Judge | None:
    return _registry.get((suite, name))


def in_modes(chosen, modes) -> list[str]:
    """The columns of ``chosen`` that a package made for the graph ``modes`` has."""
    return [name for name in chosen if get(name).mode in (None, *modes)]


def asked_in_modes(chosen, modes) -> list[str]:
    """:func:`in_modes` of the columns asked for (``--column``) and the graph modes
    (``--modes``); a choice that leaves none is an error naming both flags."""
    found = in_modes(chosen, modes)
    if not found:
        raise OpsdkError(
            f"--column {','.join(chosen)}: no column of --modes {','.join(modes)} "
            "(ge and fusion check the ge mode): add it to --modes, or drop --column"
        )
    return found


def compiling() -> tuple[str, ...]:
    """The columns that compile with torch.compile, in matrix order."""
    return tuple(n for n in names() if get(n).compiles)


register(Column("eager", "opsdk.harness.columns.eager", ("kernel",), "eager"))
register(
    # opcheck's AOT dispatch tests trace what aot_eager traces, with the same AOT settings.
    Column(
        "opcheck",
        "opsdk.harness.columns.opcheck",
        ("kernel", "fake"),
        "schema",
        leaves_to=("aot_eager",),
    )
)
register(
    Column("aot_eager", "opsdk.harness.columns.aot_eager", ("kernel", "fake"), "aot", compiles=True)
)
register(
    Column(
        "ge",
        "opsdk.harness.columns.ge",
        ("kernel", "fake", "ir", "converter"),
        "ge-exec",
        compiles=True,
        empty_cases=False,  # TorchAir folds an op with an empty output into a Const
        mode="ge",
    )
)
register(
    Column(
        "npugraph_ex",
        "opsdk.harness.columns.npugraph_ex",
        ("kernel", "fake"),
        "replay",
        compiles=True,
        mode="npugraph_ex",
    )
)
register(
    Column(
        "fusion",
        "opsdk.harness.columns.fusion",
        ("kernel", "fake", "ir", "converter"),
        "pattern-results",
        empty_cases=False,  # as ge: TorchAir folds an empty output into a Const
        selects="opsdk._runtime.patterns:has_pattern",
        mode="ge",
    )
)
register(
    # The op's own AscendC tiling and kernel, on concrete sizes: static shapes only.
    Column(
        "ascendc",
        "opsdk.harness.columns.ascendc",
        ("kernel",),  # and the IR naming its sources, which `selects` found
        "kernel",
        empty_cases=False,  # a launch of no elements checks nothing
        shape_modes=("static",),
        selects="opsdk.cann.kernel.sources:has_sources",
    )
)
