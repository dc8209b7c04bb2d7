"""`opsdk new NAME --into DIR`: add an op to an op package `opsdk new` wrote.

The op is rendered like a package of its own, and only its modules are kept:
they become the subpackage ``PKG/NAME/``, which the package's ``__init__``
discovers (see :mod:`opsdk._runtime.oplib`), so no existing op's file is touched. The
one edit is appending a ``[[tool.opsdk.ops]]`` table to ``pyproject.toml``,
recording how the op was generated. Everything is checked and rendered first;
then the subpackage is moved in and the new pyproject.toml replaces the old
one, each a rename.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from opsdk._runtime import spec
from opsdk.axes import GRAPH_MODES
from opsdk.errors import ScaffoldError
from opsdk.scaffold._render import (
    NewRequest,
    NewResult,
    build_spec,
    new,
    package_name,
    render,
    staging_dir,
)
from opsdk.scaffold.templating import tomlstr

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


@dataclasses.dataclass(frozen=True)
class OpPackage:
    """What an existing op package records about itself in ``[tool.opsdk]``."""

    project: Path
    package: Path  # the importable package: its modules are the first op
    namespace: str
    style: str
    ops: tuple[str, ...]  # names of the ops it holds


def add(req: NewRequest, into: Path) -> NewResult:
    """Add the op ``req`` describes to the op package in ``into``; never overwrite."""
    if req.force:
        raise ScaffoldError(
            "--force does not apply with --into: an op package's ops are never replaced; "
            "pick a new op name"
        )
    pkg = read(Path(into).expanduser())
    req = dataclasses.replace(req, package=None)  # an added op is a subpackage named after it
    if req.style == "cpp" and pkg.style != "cpp":
        raise ScaffoldError(
            f"--style cpp: {pkg.project} is a {pkg.style} package, whose pyproject.toml builds "
            "no C++; add a Python-style op, or start a package with opsdk new --style cpp"
        )
    op = build_spec(dataclasses.replace(req, namespace=req.namespace or pkg.namespace))
    name = package_name(op, req)
    _refuse_clash(pkg, op, name)
    target = pkg.package / name
    pyproject = pkg.project / "pyproject.toml"
    with staging_dir(pkg.project, name) as staging:
        modules = render(op, req, staging, package=pkg.package.name) / name
        recorded = staging / "pyproject.toml"
        recorded.write_text(_with_record(pyproject.read_text(), op, req))
        try:
            os.rename(modules, target)
            try:
                os.replace(recorded, pyproject)
            except OSError:
                os.rename(target, modules)  # back into staging, which is removed
                raise
        except OSError as err:
            raise ScaffoldError(
                f"cannot write {target} ({err}): check permissions and space"
            ) from None
    return NewResult(target, None)


def read(project: Path) -> OpPackage:
    """The op package in ``project``, from its pyproject.toml; refuses anything else."""
    pyproject = project / "pyproject.toml"
    hint = "point --into at a directory opsdk new created (the one holding pyproject.toml)"
    try:
        settings = tomllib.loads(pyproject.read_text())["tool"]["opsdk"]
        first = spec.parse(settings["schema"], validate=False)
        added = [name for o in settings.get("ops", []) for name in _names(o)]
        style = settings["style"]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ScaffoldError(f"--into {project}: cannot read {pyproject} ({err}); {hint}") from None
    except (KeyError, TypeError, spec.SpecError):
        raise ScaffoldError(
            f"--into {project}: {pyproject} has no valid [tool.opsdk] schema and style; {hint}"
        ) from None
    package = project / settings.get("package", first.name)
    init = package / "__init__.py"
    if not init.is_file() or "import_added_ops" not in init.read_text():
        raise ScaffoldError(
            f"--into {project}: {init} does not list added ops; regenerate the package with "
            "this opsdk, or end its OPS tuple with *import_added_ops(__name__, __path__)"
        )
    return OpPackage(project, package, first.namespace, style, (*_names(settings), *added))


def _names(recorded: dict) -> tuple[str, ...]:
    """The op names a ``[tool.opsdk]`` (or ``[[tool.opsdk.ops]]``) table records: a pair's
    two, else one. The schema recorded is the one the package is named after."""
    op = spec.parse(recorded["schema"], validate=False)
    return (op.name, f"{op.name}_") if recorded.get("pair") else (op.name,)


def _refuse_clash(pkg: OpPackage, op: spec.OpSchema, name: str) -> None:
    """An op name (or its GE IR name) already taken, or any file in the way, is refused."""
    ir_name = spec.camel_case(op.name)
    taken = next((n for n in pkg.ops if spec.camel_case(n) == ir_name), None)
    if taken is not None or op.name in pkg.ops:
        clash = "" if taken in (None, op.name) else f" (its GE IR name {ir_name} is {taken}'s)"
        raise ScaffoldError(
            f"{pkg.project} already has an op named {taken or op.name}{clash}: pick another "
            "name; nothing was written"
        )
    for path in (pkg.package / name, pkg.package / f"{name}.py"):
        if path.exists():
            raise ScaffoldError(f"{path} already exists: pick another op name; nothing was written")


def _with_record(text: str, op: spec.OpSchema, req: NewRequest) -> str:
    """``text`` (pyproject.toml) with the op's ``[[tool.opsdk.ops]]`` table appended,
    checked by parsing it back."""
    recorded = spec.inplace_pair(op)[1] if req.pair else op
    entry = {"schema": f"{op.namespace}::{recorded.schema}", "style": req.style}
    for flag in ("autograd", "pair", "attach", "pattern"):
        if getattr(req, flag):
            entry[flag] = True
    if "ge" not in req.modes:
        entry["modes"] = ",".join(req.modes)
    lines = [f"{key} = {tomlstr(v) if isinstance(v, str) else 'true'}" for key, v in entry.items()]
    new = text.rstrip("\n") + "\n\n[[tool.opsdk.ops]]\n" + "\n".join(lines) + "\n"
    try:
        recorded = tomllib.loads(new)["tool"]["opsdk"]["ops"][-1]
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        recorded = None
    if recorded != entry:
        raise ScaffoldError(
            "cannot record the op in pyproject.toml: its [tool.opsdk] has an 'ops' key that "
            "is not a list of [[tool.opsdk.ops]] tables; fix it"
        )
    return new


def _request_of(recorded: dict, out: Path) -> NewRequest:
    """The `opsdk new` request a ``[tool.opsdk]`` (or ``[[tool.opsdk.ops]]``) table records."""
    op = spec.parse(recorded["schema"], validate=False)
    # The add's schema is what `opsdk new NAME [--inplace | --pair]` (no --schema) records:
    # replay it as that (torch_npu's in-place form of it comes only from --schema or --pair).
    pair = recorded.get("pair", False)
    given = (
        recorded.get("attach", False)
        or not op.is_default_add
        or (spec.returns_its_first_argument(op) and not pair)
    )
    return NewRequest(
        op.name,
        inplace=op.inplace and not given,
        namespace=op.namespace,
        schema=recorded["schema"].split("::", 1)[1] if given else None,
        style=recorded["style"],
        out=out,
        autograd=recorded.get("autograd", False),
        pair=pair,
        attach=recorded.get("attach", False),
        package=recorded.get("package"),
        pattern=recorded.get("pattern", False),
        modes=tuple(recorded["modes"].split(",")) if "modes" in recorded else GRAPH_MODES,
    )


def regenerate(project: Path, out: Path) -> Path:
    """A fresh copy of ``project`` under ``out``, made by replaying the `opsdk new` runs
    its pyproject.toml records: what this opsdk would write for the same inputs."""
    settings = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["opsdk"]
    fresh = new(_request_of(settings, out)).path
    for added in settings.get("ops", []):
        add(_request_of(added, out), fresh)
    return fresh
