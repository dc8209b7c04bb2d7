"""What `opsdk new`'s flags ask for, as one decision: which of the three ways (a new
package, an op added ``--into`` one, a CANN project's package) with which request, the
flag combinations that cannot go together refused before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from opsdk import cann
from opsdk.axes import DEFAULT_STYLE, GRAPH_MODES
from opsdk.cann import files
from opsdk.cann.exports import file_stem
from opsdk.errors import OpsdkError
from opsdk.scaffold import cann_torch, into
from opsdk.scaffold._render import NewRequest, NewResult, attach_target, new
from opsdk.scaffold.cann_project import new_project

__all__ = ["Asked", "Plan", "plan"]


@dataclass(frozen=True)
class Asked:
    """`opsdk new`'s flags, as given (None: not given)."""

    name: str | None = None
    inplace: bool = False
    namespace: str | None = None
    schema: str | None = None
    style: str = DEFAULT_STYLE
    out: Path | None = None
    force: bool = False
    autograd: bool = False
    from_cann: Path | None = None
    pair: bool = False
    attach: str | None = None  # NS::OP
    updatable: tuple[str, ...] = ()
    pattern: bool = False
    modes: tuple[str, ...] | None = None
    into: Path | None = None
    skip_unreadable: bool = False


@dataclass(frozen=True)
class Plan:
    """The package to write and how; ``notes`` are what the choice made for the user
    says (a mode left out)."""

    request: NewRequest
    into: Path | None
    project: Path | None  # --from-cann DIR: every op it defines, one package
    skip_unreadable: bool
    notes: tuple[str, ...]

    def make(self) -> NewResult:
        """Write it: the package, or the op added to the package in ``into``."""
        if self.into is not None:
            return into.add(self.request, self.into)
        if self.project is not None:
            return new_project(self.request, self.project, self.skip_unreadable)
        return new(self.request)


def plan(asked: Asked) -> Plan:
    """The plan ``asked`` describes; an :class:`OpsdkError` for flags that exclude each other."""
    project = asked.from_cann if asked.from_cann is not None and asked.from_cann.is_dir() else None
    name, namespace = asked.name, asked.namespace
    if asked.attach is not None:
        name, namespace = attach_target(asked.attach, name, namespace)
    elif name is None and asked.from_cann is not None and project is None:
        name = _only_op_name(asked.from_cann)
    elif name is None and project is None:
        raise OpsdkError("give the op's NAME (or --attach NS::OP, or --from-cann FILE|DIR)")
    modes, notes = _modes(asked)
    request = NewRequest(
        name,
        asked.inplace,
        namespace,
        asked.schema,
        asked.style,
        asked.out or Path("."),
        asked.force,
        asked.autograd,
        asked.from_cann,
        pair=asked.pair,
        attach=asked.attach is not None,
        updatable=asked.updatable,
        pattern=asked.pattern,
        modes=modes,
    )
    if asked.into is not None and asked.out is not None:
        raise OpsdkError(
            "--out and --into exclude each other: --into DIR adds to the package in DIR"
        )
    if asked.skip_unreadable and project is None:
        raise OpsdkError("--skip-unreadable is for --from-cann DIR (a project of several ops)")
    if project is not None and (asked.into is not None or asked.attach is not None):
        raise OpsdkError(
            "--from-cann DIR makes one package of the project's ops: drop --into/--attach, or "
            "give one op's file (--from-cann DIR/op_host/OP.cpp)"
        )
    return Plan(request, asked.into, project, asked.skip_unreadable, notes)


def _modes(asked: Asked) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The graph modes the package is made for, and what that choice says: those asked,
    else every one, but npugraph_ex alone for an attached op without its CANN
    definition: its GE op type is the library's, which opsdk would otherwise make up
    from the op's name."""
    if asked.modes is not None:
        return tuple(asked.modes), ()
    if asked.attach is not None and asked.from_cann is None:
        note = (
            f"--attach {asked.attach}: made for npugraph_ex (no converter, no IR): its GE op "
            "type is its library's; add --from-cann FILE (its CANN definition) for the GE path"
        )
        return ("npugraph_ex",), (note,)
    return GRAPH_MODES, ()


def _only_op_name(path: Path) -> str:
    """The op name of a CANN file that defines one op: the snake_case of its type, as the
    file's own name spells it if it does."""
    ir = cann_torch.pick(cann.read(path), None, str(path)).ir
    return files.op_name(ir.op_type, path, file_stem(ir))
