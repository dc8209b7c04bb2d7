"""Build an op library's C++ Meta registrations against CPU torch, once per set of sources.

Only the files holding a ``TORCH_LIBRARY_IMPL(ns, Meta, m)`` block (or ``impl`` s under a
Meta key) are compiled, each into its own shared library with g++: torch's include
paths (``torch.utils.cpp_extension``), the file's folders up to the library's root, and
opsdk's own stand-ins of the torch_npu / ACL / aclnn headers such files include
(``include/``, written from how libraries use them: no header is copied). A library is
cached under opsdk's cache directory, keyed on the file, the project headers it
includes, the stand-ins, torch's version and the flags. Loading one runs its static
registrations, so the first load of a new library happens in a child process: a crash
there is a finding on the file, never the audit's end.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

from opsdk._runtime import locator

__all__ = ["INCLUDE", "MetaBuildFailure", "Built", "build", "load"]

INCLUDE = Path(__file__).resolve().parent / "include"
RECIPE_VERSION = 1  # part of every cache key: bump it when the recipe changes
# -Wfatal-errors: a file that does not build says its first error, and soon
FLAGS = ("-std=c++17", "-O0", "-fPIC", "-shared", "-w", "-Wfatal-errors")
_INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)
_ERROR = re.compile(r"^(?P<where>[^:\n]+:\d+):(?:\d+:)? (?:fatal )?error: (?P<what>.*)$", re.M)
_LOADS = "loads"  # the marker beside a library a child process loaded
_FAILED = "failed"  # what the compiler said of sources that do not build


class MetaBuildFailure(Exception):
    """A file did not build or load: ``str()`` is one line, file:line and the symbol;
    ``symbol``: the function it calls that nothing built with it defines ("" if none)."""

    def __init__(self, line: str, symbol: str = ""):
        super().__init__(line)
        self.symbol = symbol


@dataclass(frozen=True)
class Built:
    library: Path
    seconds: float  # compile time; 0.0 when cached


def build(source: Path, root: Path, defines: dict[str, str]) -> Built:
    """The shared library of ``source``'s registrations (``root``: the library's top
    folder; ``defines``: the build's macros), built now unless cached."""
    dirs = _folders(source, root)
    headers = _included(source, (*dirs, INCLUDE))
    flags = [*FLAGS, *(f"-D{k}={v}" for k, v in sorted(defines.items())), *_torch_flags(dirs)]
    key = _key(source, headers, flags)
    directory = locator.cache_root() / "audit-meta" / f"{source.stem}_{key}"
    library, failed = directory / "meta.so", directory / _FAILED
    if library.is_file():
        return Built(library, 0.0)
    if failed.is_file():  # the same sources fail the same way: said again, not rebuilt
        raise MetaBuildFailure(failed.read_text())
    start = time.perf_counter()
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f"meta.{os.getpid()}.so"
    done = subprocess.run(
        [os.environ.get("CXX", "g++"), *flags, str(source), "-o", str(partial), *_link()],
        capture_output=True,
        text=True,
        cwd=directory,
    )
    if done.returncode != 0:
        (directory / "build.log").write_text(done.stderr)
        failed.write_text(_first_error(done.stderr, root, directory))
        raise MetaBuildFailure(failed.read_text())
    partial.replace(library)
    return Built(library, round(time.perf_counter() - start, 2))


def load(built: Built, source: Path, root: Path) -> None:
    """Load ``built`` into this process, its registrations with it; the first time in a
    child first (a crash there raises :class:`MetaBuildFailure`, naming the file)."""
    import torch

    marker = built.library.with_name(_LOADS)
    if not marker.is_file():
        probe = f"import torch; torch.ops.load_library({str(built.library)!r})"
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
        if done.returncode != 0:
            raise _unloaded(source, root, done.stderr, done.returncode)
        marker.touch()
    try:
        torch.ops.load_library(str(built.library))
    except OSError as err:  # torch says which symbol only in the error it raises from
        raise _unloaded(source, root, f"{err.__cause__ or ''}\n{err}", None) from None


def _unloaded(source: Path, root: Path, said: str, returncode: int | None) -> MetaBuildFailure:
    """Why ``source``'s library did not load (``said``: the loader's words; a child's
    exit status, if it was a child), in one line."""
    where = _relative(source, root)
    if returncode is not None and returncode < 0:
        return MetaBuildFailure(
            f"{where}: loading its registrations crashed the process (signal {-returncode})"
        )
    undefined = re.search(r"undefined symbol: (\S+)", said)
    if undefined:
        symbol = _demangled(undefined[1])
        return MetaBuildFailure(f"{where}: does not link: undefined symbol {symbol}", symbol)
    lines = [line for line in said.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else f"exit {returncode}"
    return MetaBuildFailure(f"{where}: loading its registrations failed: {last}")


def _demangled(symbol: str) -> str:
    """``symbol`` (from a loader's ``undefined symbol: X``) demangled when c++filt is there."""
    try:
        name = subprocess.run(["c++filt", symbol], capture_output=True, text=True).stdout.strip()
    except OSError:
        name = symbol
    return name or symbol


def _folders(source: Path, root: Path) -> tuple[Path, ...]:
    """The source's folder and each above it up to ``root``: where its ``#include "x"``
    s resolve, as the library's own build sets them."""
    folders, folder = [], source.parent
    while True:
        folders.append(folder)
        if folder == root or root not in folder.parents:
            return tuple(folders)
        folder = folder.parent


def _included(source: Path, dirs: tuple[Path, ...]) -> list[Path]:
    """The files ``source`` includes, transitively, that one of ``dirs`` holds."""
    seen, todo = [], [source]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        for name in _INCLUDE_LINE.findall(path.read_text(errors="replace")):
            for folder in (path.parent, *dirs):
                candidate = folder / name
                if candidate.is_file():
                    todo.append(candidate.resolve())
                    break
    return seen


def _torch_flags(dirs: tuple[Path, ...]) -> list[str]:
    import torch
    from torch.utils import cpp_extension

    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    includes = [
        *dirs,
        INCLUDE,
        *map(Path, cpp_extension.include_paths()),
        sysconfig.get_paths()["include"],
    ]
    return [f"-D_GLIBCXX_USE_CXX11_ABI={abi}", *(f"-I{d}" for d in includes)]


def _link() -> list[str]:
    from torch.utils import cpp_extension

    [lib] = cpp_extension.library_paths()[:1]
    return [f"-L{lib}", f"-Wl,-rpath,{lib}", "-lc10", "-ltorch", "-ltorch_cpu"]


def _key(source: Path, headers: list[Path], flags: list[str]) -> str:
    import torch

    digest = hashlib.sha256(repr((RECIPE_VERSION, flags, torch.__version__)).encode())
    for path in [*headers, *sorted(p for p in INCLUDE.rglob("*") if p.is_file())]:
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(os.environ.get("CXX", "g++").encode())
    return digest.hexdigest()[:16]


def _first_error(stderr: str, root: Path, directory: Path) -> str:
    """The compiler's first error as file:line and what it says (the symbol)."""
    match = _ERROR.search(stderr)
    if match is None:
        return f"does not compile ({directory / 'build.log'})"
    where = match["where"]
    path, _, line = where.rpartition(":")
    where = f"{_relative(Path(path), root)}:{line}"
    return (
        f"{where}: does not compile: {match['what']} (compiler output: {directory / 'build.log'})"
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
