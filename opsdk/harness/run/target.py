"""Load what `opsdk check` and `opsdk audit` are pointed at: an op package directory, a
module's ``.py`` file (a team's library is often one file) or a module name, found from
the current directory as ``python -c "import NAME"`` finds it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from opsdk._runtime.device import ensure_npu
from opsdk.errors import TargetError


def package_dir(path: Path) -> Path:
    """The importable package inside an op project (or the package itself)."""
    if (path / "__init__.py").is_file():
        return path
    candidates = [p.parent for p in sorted(path.glob("*/__init__.py")) if p.parent.name != "tests"]
    named = [p for p in candidates if p.name == path.name]
    if named or len(candidates) == 1:
        return (named or candidates)[0]
    raise TargetError(
        f"{path} holds no single op package (found {[p.name for p in candidates] or 'none'}): "
        "point opsdk at the package directory (or a module's .py file)"
    )


def importable_here() -> None:
    """The current directory first on the import path, as ``python -c`` has it: the
    `opsdk` script's own folder stands there instead, so a module ``python -c "import
    NAME"`` imports from here would otherwise not be found."""
    here = str(Path.cwd())
    if here not in sys.path and "" not in sys.path:
        sys.path.insert(0, here)


def findable(target: str) -> None:
    """Raise :class:`TargetError` for a target that is no existing path and no module
    found on the import path, found without importing anything (torch included): a
    mistyped target costs no import."""
    path = Path(target)
    if path.exists():
        return
    if path.suffix == ".py" or "/" in target or "\\" in target:
        raise TargetError(
            f"{target}: no such file or directory: give an op package directory "
            "(e.g. examples/custom_ops/my_add) or a module's .py file that exists"
        )
    importable_here()
    try:
        found = importlib.util.find_spec(target.partition(".")[0])
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise TargetError(_NOT_FOUND.format(target=target))


def findable_package(target: str) -> None:
    """:func:`findable` for an op package, and what can be told of its ops without
    importing it (torch, TorchAir: seconds): a folder that holds no single package, or a
    package or module file none of whose code names ``OPS`` (so it declares none)."""
    findable(target)
    path = Path(target)
    if path.is_dir():
        package = package_dir(path.resolve())
        name, files = package.name, [package / "__init__.py", *package.rglob("*.py")]
    elif path.is_file() and path.suffix == ".py":
        name, files = _module_of(path.resolve())[1], [path]
    else:
        return
    if not any("OPS" in file.read_text(errors="replace") for file in files):
        raise TargetError(no_ops(name))


def no_ops(name: str) -> str:
    """What a package or module ``name`` that declares no ops is told."""
    return f"{name} declares no OPS: add OPS = (torch.ops.ns.op.default,) to its __init__.py"


_NOT_FOUND = (
    "{target!r} is neither a directory nor an importable module: give an op package "
    "directory (e.g. examples/custom_ops/my_add) or a module `python -c 'import NAME'` "
    "imports from here"
)


def sources(target: str) -> tuple[Path, ...]:
    """Where the target's code is, found without running any of it: what a run must
    never write over. A directory's package, a module's file, or for a module name its
    top-level package's folders (or its file): finding a submodule would import its
    parents. Nothing when there is no telling: :func:`load` then says what is wrong."""
    path = Path(target)
    try:
        if path.is_file():
            return (path,)
        if path.exists():
            return (package_dir(path.resolve()),)
        importable_here()
        spec = importlib.util.find_spec(target.partition(".")[0])
    except (ImportError, ValueError, TargetError):
        return ()
    if spec is None:
        return ()
    if spec.submodule_search_locations:
        return tuple(map(Path, spec.submodule_search_locations))
    return (Path(spec.origin),) if spec.has_location and spec.origin else ()


def load(target: str):
    """Import the target (after the npu device exists) and return the module."""
    ensure_npu()
    path = Path(target)
    if path.is_file():
        if path.suffix != ".py":
            raise TargetError(
                f"{target} is neither an op package directory nor a module's .py file"
            )
        root, name = _module_of(path.resolve())
        sys.path.insert(0, str(root))
    elif path.exists():
        pkg = package_dir(path.resolve())
        sys.path.insert(0, str(pkg.parent))
        name = pkg.name
    else:
        importable_here()
        name = target
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name == name or name.startswith(f"{err.name}."):
            raise TargetError(_NOT_FOUND.format(target=target)) from None
        raise TargetError(f"importing {name} failed: {err}; install what it needs") from None
    except Exception as err:  # noqa: BLE001 - any import error of user code is reported, not raised
        lines = str(err).strip().splitlines() or [type(err).__name__]
        raise TargetError(
            f"importing {name} failed: {type(err).__name__}: {lines[0].removesuffix(':')}; "
            f"fix the package so `python -c 'import {name}'` works{_marked(lines)}"
        ) from None


def _module_of(file: Path) -> tuple[Path, str]:
    """The folder to import a module's file from, and its dotted name: a file inside a
    package is imported as the package's module, as its package imports it (as a
    top-level module of its own, its registrations would run twice)."""
    parts = [] if file.name == "__init__.py" else [file.stem]
    folder = file.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _marked(lines: list[str]) -> str:
    """The lines under an error's first that torch's parsers add to show where the text
    is wrong (the text, then ``~~~ <--- HERE`` under the fault), '' if there are none."""
    end = next((i for i, line in enumerate(lines) if "<--- HERE" in line), 0)
    return "".join(f"\n{line}" for line in lines[1 : end + 1])
