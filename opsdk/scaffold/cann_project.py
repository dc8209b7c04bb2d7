"""``opsdk new --from-cann DIR``: an AscendC op project becomes one op package.

An AscendC project holds one ``op_host/<op>.cpp`` per op (its ``OpDef``, the source of
truth; tiling and shape-inference sources beside it define none) and often the msopgen
JSON it was generated from. Every op defined there becomes one op of a package named
after the directory: the first (by name) its top-level modules, the others subpackages,
as ``opsdk new --into`` adds them. The package is built staged and appears whole or not
at all: an op opsdk cannot make (a refusal of its reader or of its torch side) fails the
command, naming its file and the reason; with ``skip_unreadable`` (``--skip-unreadable``)
it is skipped with a warning saying so, and the others still come.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

from opsdk import cann
from opsdk._runtime import spec
from opsdk.cann import files
from opsdk.cann.exports import file_stem
from opsdk.errors import SpecError
from opsdk.scaffold import into
from opsdk.scaffold._render import NewRequest, NewResult, new

__all__ = ["Definition", "definitions", "new_project", "package_of"]


@dataclasses.dataclass(frozen=True)
class Definition:
    """One op of the project: its definition and the file it was read from."""

    op: cann.CannOp
    source: Path

    @property
    def name(self) -> str:
        return files.op_name(self.op.ir.op_type, self.source, file_stem(self.op.ir))


def definitions(root: Path, skip_unreadable: bool = False) -> list[Definition]:
    """Every op defined under ``root``, by name: OpDef sources (``op_host/*.cpp``) and
    msopgen JSON files. An op in both is the OpDef's (the project's source of truth); a
    JSON file that is not msopgen's (CMakePresets.json...) is none of the project's ops.
    A file the readers refuse fails, or with ``skip_unreadable`` is skipped."""
    found: dict[str, Definition] = {}
    for path in files.msopgen_files(root) + files.opdef_files(root):
        try:
            ops = cann.read(path)
        except SpecError as err:
            _refused(root, f"{path.relative_to(root)}", err, skip_unreadable)
            continue
        for op in ops:
            _add(found, Definition(op, path), root)
    if not found:
        raise SpecError(
            f"--from-cann {root}: no op definition found; an AscendC project has "
            "op_host/<op>.cpp (an OpDef) or msopgen JSON: point at one of them or the project"
        )
    return [found[name] for name in sorted(found)]


class _Refused(SpecError):
    """An op of the project opsdk cannot make, named with its file: the command's error."""


def _refused(root: Path, what: str, err: SpecError, skip: bool) -> None:
    """One op opsdk cannot make: the command fails (the package would miss it), unless the
    user asked to skip such ops, then a warning says which was skipped and why."""
    if not skip:
        raise _Refused(
            f"--from-cann {root}: {what}: {err} (fix it, or pass --skip-unreadable to make the "
            "package without it)"
        ) from None
    warnings.warn(f"skipped {what}: {err}", cann.CannWarning, stacklevel=3)


def _add(found: dict[str, Definition], definition: Definition, root: Path) -> None:
    known = found.get(definition.name)
    if known is None:
        found[definition.name] = definition
        return
    here, there = (d.source.relative_to(root) for d in (definition, known))
    is_opdef = [d.source.suffix == ".cpp" for d in (definition, known)]
    if is_opdef[0] == is_opdef[1]:
        raise SpecError(
            f"--from-cann {root}: {here} and {there} both define {definition.op.ir.op_type}; "
            "remove one, or point --from-cann at the file you mean"
        )
    opdef, other = (definition, known) if is_opdef[0] else (known, definition)
    if opdef.op != other.op:
        warnings.warn(
            f"{other.source.relative_to(root)} and {opdef.source.relative_to(root)} define "
            f"{opdef.op.ir.op_type} differently: using the OpDef, the project's source of truth",
            cann.CannWarning,
            stacklevel=2,
        )
    found[definition.name] = opdef


def package_of(root: Path) -> str:
    """The package name of a project directory: its name in snake_case (``AddCustom`` ->
    ``add_custom``, ``my-ops`` -> ``my_ops``)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", root.resolve().name)
    name = re.sub(r"\W+", "_", words).strip("_").lower()
    try:
        return spec.check_identifier("package name", name)
    except SpecError:
        raise SpecError(
            f"--from-cann {root}: the directory's name makes no Python package name "
            f"({name!r}); rename the directory, or point --from-cann at its op files one by one"
        ) from None


def new_project(req: NewRequest, root: Path, skip_unreadable: bool = False) -> NewResult:
    """The package of every op under ``root`` (``req.name``, if given, selects one op: a
    package of that op alone, named after it); ``skip_unreadable``: leave out, with a
    warning, the ops opsdk cannot make instead of failing."""
    found = definitions(root, skip_unreadable)
    if req.name is not None:
        chosen = [d for d in found if req.name in (d.name, d.op.ir.op_type)]
        if not chosen:
            names = ", ".join(d.name for d in found)
            raise SpecError(f"--from-cann {root} defines no op {req.name!r}; it defines {names}")
        return new(dataclasses.replace(req, name=chosen[0].name, from_cann=chosen[0].source))
    package = package_of(root)
    requests = [dataclasses.replace(req, name=d.name, from_cann=d.source) for d in found]
    where = {r.name: f"{r.from_cann.relative_to(root)}" for r in requests}
    for i, first in enumerate(requests):  # the first op opsdk can make holds the package

        def add_the_others(project: Path, rest=requests[i + 1 :]) -> None:
            for other in rest:
                try:
                    into.add(dataclasses.replace(other, force=False), project)
                except SpecError as err:
                    _refused(root, f"{other.name} ({where[other.name]})", err, skip_unreadable)

        try:
            return new(dataclasses.replace(first, package=package), then=add_the_others)
        except _Refused:  # another op's, said in full
            raise
        except SpecError as err:
            _refused(root, f"{first.name} ({where[first.name]})", err, skip_unreadable)
    raise SpecError(
        f"--from-cann {root}: opsdk can make none of its ops (each refusal is a warning above)"
    )
