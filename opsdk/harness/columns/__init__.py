"""Whatever judges a cell, in one registry: the backend columns of `opsdk check` (one
:class:`Column` each) and the checks of `opsdk audit` (:class:`opsdk.audit.Check`), each
a :class:`Judge`, by suite and name (the name cells, waivers and reports use; the JSON
key ``backend``).

A column's facts (its name, what it needs from an op, where an unexpected error
is reported, whether it compiles) are read without importing torch: the CLI
parser, ``opsdk --help`` and the pytest plugin need them. How it runs lives in
its module, a :class:`ColumnModule` imported only when one of its cells runs (compiled
columns pull in Dynamo, which eager cells never need), and held to the Protocol then.
Adding a column is one module and one :func:`register` line below.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from opsdk._registry import Registration, Registry
from opsdk.axes import SHAPE_MODES
from opsdk.errors import OpsdkError

if TYPE_CHECKING:
    from opsdk._runtime.spec import OpSchema
    from opsdk.harness.cell import Cell

__all__ = [
    "ColumnModule",
    "Column",
    "CompilingModule",
    "Judge",
    "Lowering",
    "asked_in_modes",
    "column",
    "compiling",
    "find",
    "in_modes",
    "judge",
    "names",
    "register",
    "selected",
]

CHECK_SUITE = "check"  # the suite of `opsdk check`'s columns

# What a compiling column shares with a case's trace: its Dynamo backend, and a factory
# of the context holding the checks it keeps active while compiling.
Lowering = tuple[Callable[..., Any], Callable[[], contextlib.AbstractContextManager[Any]]]


@runtime_checkable
class ColumnModule(Protocol):
    """What a column's module defines: ``run`` checks one cell, raising a
    :class:`~opsdk.harness.cell.CellFailure` for a finding; graphs it compiles go to
    ``dump_dir``. An optional ``environment()`` says what a report records about it."""

    def run(self, cell: Cell, dump_dir: Path | None = None) -> None: ...


@runtime_checkable
class CompilingModule(ColumnModule, Protocol):
    """A column that compiles (``Column.compiles``) also gives its lowering, so cells
    of one case share its trace (:mod:`opsdk.harness.core.shared_trace`)."""

    def lowering(self, spec: OpSchema) -> Lowering: ...


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

    def implementation(self) -> object: ...


@dataclass(frozen=True)
class Column:
    """One backend column; ``module`` implements it (a :class:`ColumnModule`)."""

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

    def implementation(self) -> ColumnModule:
        """The column's module, held to :class:`ColumnModule` on first use (registering
        imports nothing, so it cannot be held then)."""
        module = importlib.import_module(self.module)
        if not isinstance(module, ColumnModule):
            raise TypeError(f"column {self.name!r}: {self.module} defines no run(cell, dump_dir)")
        return module

    def run(self, cell: Cell, dump_dir: Path | None = None) -> None:
        self.implementation().run(cell, dump_dir)

    def lowering(self, spec: OpSchema) -> Lowering:
        """The Dynamo backend, and a context factory for the checks kept while compiling."""
        module = self.implementation()
        if not isinstance(module, CompilingModule):
            raise TypeError(f"column {self.name!r}: {self.module} defines no lowering(spec)")
        return module.lowering(spec)

    def applies(self, spec: OpSchema) -> bool:
        """Whether the op ``spec`` has cells in this column."""
        return selected(self.selects, spec)

    def environment(self) -> dict:
        describe = getattr(self.implementation(), "environment", None)
        return describe() if describe is not None else {}


def selected(selects: str | None, subject: object) -> bool:
    """Whether a judge's ``selects`` (``"module:function"``, None: everything) picks
    ``subject`` (an op's spec for a column, a library for an audit check)."""
    if selects is None:
        return True
    module, _, function = selects.partition(":")
    return bool(getattr(importlib.import_module(module), function)(subject))


_suites: dict[str, Registry[str, Judge]] = {}


def _suite(suite: str) -> Registry[str, Judge]:
    if suite not in _suites:
        what = "column" if suite == CHECK_SUITE else f"{suite} check"
        _suites[suite] = Registry(what, "give it a name of its own")
    return _suites[suite]


def register(judge: Judge) -> Registration:
    """Add ``judge`` after those of its suite registered before it (the matrix's order);
    the returned handle's ``undo()`` removes it (a test's judge ends with it)."""
    return _suite(judge.suite).add(judge.name, judge)


def names(suite: str = CHECK_SUITE) -> tuple[str, ...]:
    """The names of the suite's judges (default: check's columns), in matrix order."""
    return tuple(_suite(suite).keys())


def find(name: str, suite: str = CHECK_SUITE) -> Judge | None:
    """The suite's judge ``name``, None where it has none (a name not yet implemented)."""
    return _suite(suite).get(name)


def judge(name: str, suite: str = CHECK_SUITE) -> Judge:
    """The suite's judge ``name``; an unknown name is an error naming the known ones."""
    return _suite(suite).require(name)


def column(name: str) -> Column:
    """The backend column ``name``; an unknown name is an error naming the columns."""
    found = judge(name)
    if not isinstance(found, Column):
        raise TypeError(f"the check suite's judge {name!r} is a {type(found).__name__}")
    return found


def in_modes(chosen: Iterable[str], modes: Iterable[str]) -> list[str]:
    """The columns of ``chosen`` that a package made for the graph ``modes`` has."""
    return [name for name in chosen if column(name).mode in (None, *modes)]


def asked_in_modes(chosen: Sequence[str], modes: Sequence[str]) -> list[str]:
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
    return tuple(n for n in names() if column(n).compiles)


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
