"""Compile an op's C++ inference into a shared library, once per set of sources.

The sources compile with g++ against opsdk's own stand-in headers of the gert runtime
API (``include/``, written from the API's facts: no CANN header is copied or shipped).
On a host with CANN (:func:`header_dirs`) its include folders come after them: a header
opsdk has no stand-in of (a tiling, platform or communication API an include chain
reaches) is CANN's own there, while the gert API stays opsdk's, whose contexts the entry
builds. The library is cached under opsdk's cache directory, keyed on everything that
shapes it: the op's sources, the project headers they include, opsdk's headers, CANN's
folders and the flags.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from opsdk._runtime import locator, types
from opsdk.cann.infer.call import FORMATS
from opsdk.cann.infer.sources import Inference, extracted

__all__ = [
    "INCLUDE",
    "INFER",
    "CompileFailure",
    "Built",
    "Recipe",
    "build",
    "header_dirs",
    "project_files",
]

INCLUDE = Path(__file__).resolve().parent / "include"
ENTRY = INCLUDE / "opsdk_infer_entry.cpp"
# Part of every cache key: bump it when the way libraries are built changes.
RECIPE_VERSION = 4
FLAGS = ("-std=c++17", "-O0", "-fPIC", "-w")  # -O0: inference runs once a case
# Where a project keeps headers its ops share, beside a folder of the source's path.
_SHARED = (("common", "inc"), ("common", "include"), ("include",), ("inc",))
_INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_ERROR = re.compile(r"^(?P<where>[^:\n]+:\d+):(?:\d+:)? (?:fatal )?error: (?P<what>.*)$", re.M)


@dataclass(frozen=True)
class Recipe:
    """What a kind of library is built with: its cache folder's name, opsdk's stand-in
    folders (searched in order, before the project's) and the entry compiled into it."""

    name: str
    includes: tuple[Path, ...]
    entry: Path
    flags: tuple[str, ...] = ()  # after FLAGS (the tiling's: a sanitizer)


INFER = Recipe("infer", (INCLUDE,), ENTRY)


class CompileFailure(Exception):
    """The sources did not compile: ``str()`` is one line, file:line and the symbol."""


@dataclass(frozen=True)
class Built:
    library: Path
    seconds: float  # compile time; 0.0 when the library came from the cache


def header_dirs(environ=os.environ) -> tuple[Path, ...]:
    """A CANN install's include folders, searched after opsdk's stand-ins and the
    project's: ``OPSDK_CANN_INCLUDE`` (``:``-separated), else those of the toolkit
    ``ASCEND_HOME_PATH`` or ``ASCEND_TOOLKIT_HOME`` names (``include`` and the machine's
    ``<arch>-linux/include``, as CANN's own ops build), else none."""
    explicit = environ.get("OPSDK_CANN_INCLUDE")
    if explicit:
        return tuple(Path(p) for p in explicit.split(os.pathsep) if p)
    home = environ.get("ASCEND_HOME_PATH") or environ.get("ASCEND_TOOLKIT_HOME")
    if not home:
        return ()
    candidates = (Path(home) / "include", Path(home) / f"{platform.machine()}-linux" / "include")
    return tuple(d for d in candidates if d.is_dir())


def build(inference: Inference, root: Path | None = None, recipe: Recipe = INFER) -> Built:
    """The library of ``inference``'s sources (``root``: the project, searched for the
    headers they include), built now unless cached. Raises :class:`CompileFailure`."""
    project = _include_dirs(inference, root)
    units = _units(inference, project)
    project += _searched(units, project, _repository_top(_top(inference, root)), recipe.includes)
    cann = header_dirs()
    key = _key(inference, units, project, cann, recipe, _top(inference, root))
    directory = locator.cache_root() / recipe.name / f"{inference.sources[0].stem}_{key}"
    library = directory / f"{recipe.name}.so"
    if library.is_file():
        return Built(library, 0.0)
    start = time.perf_counter()
    toolkit = _toolkit(recipe)
    directory.mkdir(parents=True, exist_ok=True)
    sources = []
    for i, (name, text) in enumerate(units):
        path = directory / f"unit{i}_{name}"
        path.write_text(text)
        sources.append(str(path))
    # one partial a thread: two threads of a process may build the same library at once
    partial = directory / f"{recipe.name}.{os.getpid()}.{threading.get_ident()}.so"
    dirs = (toolkit, *recipe.includes, *project, *cann)
    flags = [*FLAGS, *recipe.flags, *(f"-I{d}" for d in dirs), "-include", "opsdk_gert.h"]
    # The library is shared by content: its log lines (and a debug build's lines) name
    # files relative to the project (Library puts the caller's folder back in front).
    flags.append(f"-ffile-prefix-map={_top(inference, root)}/=")
    _compile([*flags, "-shared", *sources, str(toolkit / "entry.o"), "-o", str(partial)], directory)
    partial.replace(library)  # atomic: a concurrent build never sees half a library
    return Built(library, round(time.perf_counter() - start, 2))


def _toolkit(recipe: Recipe) -> Path:
    """What every op's build shares, built once per version of opsdk's headers: the
    generated ``opsdk_dtypes.h``, ``opsdk_gert.h`` precompiled (each op's source gets it
    with ``-include``) and the entry's object (most of the compile time of a small op)."""
    toolkit = locator.cache_root() / recipe.name / _toolkit_name(recipe)
    if (toolkit / "entry.o").is_file():
        return toolkit
    partial = toolkit.with_name(f"{toolkit.name}.{os.getpid()}.{threading.get_ident()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "opsdk_dtypes.h").write_text(_dtypes_header())
    shutil.copyfile(INCLUDE / "opsdk_gert.h", partial / "opsdk_gert.h")
    flags = [*FLAGS, *recipe.flags, f"-I{partial}", *(f"-I{d}" for d in recipe.includes)]
    _compile([*flags, "-x", "c++-header", "opsdk_gert.h", "-o", "opsdk_gert.h.gch"], partial)
    _compile([*flags, "-c", str(recipe.entry), "-o", "entry.o"], partial)
    try:
        partial.rename(toolkit)  # atomic; a concurrent build may have won: keep its copy
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return toolkit


def _toolkit_name(recipe: Recipe) -> str:
    """The toolkit's folder name: a digest of opsdk's headers, the compiler and its flags."""
    digest = hashlib.sha256(
        repr((RECIPE_VERSION, FLAGS, recipe.flags, shutil.which("g++"))).encode()
    )
    digest.update(_dtypes_header().encode())
    for include in recipe.includes:
        for path in sorted(p for p in include.rglob("*") if p.is_file()):
            name = str(path.relative_to(include)).encode()
            digest.update(name + b"\0" + path.read_bytes() + b"\0")
    return f"toolkit_{digest.hexdigest()[:16]}"


def _compile(command: list[str], directory: Path) -> None:
    done = subprocess.run(
        [os.environ.get("CXX", "g++"), *command], capture_output=True, text=True, cwd=directory
    )
    if done.returncode != 0:
        (directory / "build.log").write_text(done.stderr)
        raise CompileFailure(_first_error(done.stderr, directory))


def _units(inference: Inference, project: tuple[Path, ...]) -> list[tuple[str, str]]:
    """(file name, text) of each translation unit: the op's sources (an ops-nn source
    included by absolute path, so messages name it; a samples-style one extracted) and
    their companions (:func:`_companions`)."""
    if inference.extract:
        return [(inference.sources[0].name, extracted(inference))]
    return [(p.name, f'#include "{p}"\n') for p in _with_companions(inference, project)]


def _with_companions(inference: Inference, project: tuple[Path, ...]) -> list[Path]:
    """The op's sources and, transitively, the ``.cpp`` of each inference header they
    include from the project (``*infershape*.h``), beside it (ops-nn's matmul and conv:
    ``matmul_common_infershape.h`` -> ``.cpp``) or in the ``src`` folder beside its own
    (ops-transformer's ``mc2/common/inc`` -> ``src``): where a shared helper the file
    calls is defined. Other headers' sources are tiling, logging or communication code,
    which needs CANN's APIs of those."""
    paths = [p.resolve() for p in inference.sources]
    todo = list(paths)
    while todo:
        text = todo.pop().read_text(errors="replace")
        for header in _included([("", text)], project, INFER.includes):
            if header.suffix not in (".h", ".hpp") or "infershape" not in header.name:
                continue
            for companion in (
                header.with_suffix(".cpp"),
                header.parent.parent / "src" / f"{header.stem}.cpp",
            ):
                if companion.is_file() and companion not in paths:
                    paths.append(companion)
                    todo.append(companion)
    return paths


def _top(inference: Inference, root: Path | None) -> Path:
    """The project's folder: ``root``, else the first source's."""
    return Path(root).resolve() if root else inference.sources[0].resolve().parent


def _include_dirs(inference: Inference, root: Path | None) -> tuple[Path, ...]:
    """The source's folder and its parents up to ``root``, then on up to the repository's
    top (:func:`_repository_top`): a project includes its shared helpers relative to one
    of them, or from a ``common/inc`` (ops-nn's, ops-math's) or ``common/include``
    (ops-transformer's), ``include`` or ``inc`` (a REG_OP project's ``op_proto/inc``)
    beside one."""
    dirs = []
    last = _repository_top(_top(inference, root))
    for source in inference.sources:
        folder = source.resolve().parent
        while True:
            dirs.append(folder)
            dirs += [d for d in (folder.joinpath(*s) for s in _SHARED) if d.is_dir()]
            if folder == last or folder == folder.parent or not folder.is_relative_to(last):
                break
            folder = folder.parent
    return tuple(dict.fromkeys(dirs))


def _repository_top(folder: Path) -> Path:
    """The top of the repository ``folder`` is in, where its shared headers are: the first
    of ``folder`` and its parents to hold a shared header folder (``common/inc``...) or
    ``.git``; ``folder`` itself when none does (a project on its own)."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists() or any(
            candidate.joinpath(*shared).is_dir() for shared in _SHARED[:2]
        ):
            return candidate
    return folder


def _key(
    inference: Inference, units, project, cann: tuple[Path, ...], recipe: Recipe, top: Path
) -> str:
    """A digest of what shapes the library, by content and by each file's place in its
    project (the library names files relative to the project's top: a package's copy
    laid out as another's would point another's messages at the wrong file): copies of
    one layout, or several ops of one file, share one build wherever they are (opsdk's
    headers are the toolkit's key, part of this one through its name; CANN's folders
    count by name, an install's headers changing only with its version)."""
    extracted_as = (
        extracted(inference).replace(str(inference.sources[0]), "") if inference.extract else ""
    )
    digest = hashlib.sha256(repr((_toolkit_name(recipe), extracted_as, cann)).encode())
    files = sorted(
        (str(p.relative_to(top)) if p.is_relative_to(top) else "", p.read_bytes())
        for p in _included(units, project, recipe.includes)
    )
    for place, content in files:
        digest.update(place.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()[:16]


def project_files(inference: Inference, root: Path | None = None) -> list[Path]:
    """The project's files ``inference`` compiles from: its sources and the headers they
    include from the project, transitively (what a copy of it must hold)."""
    project = _include_dirs(inference, root)
    sources = _with_companions(inference, project) if not inference.extract else []
    units = [(p.name, p.read_text(errors="replace")) for p in (*inference.sources, *sources)]
    project += _searched(units, project, _repository_top(_top(inference, root)), INFER.includes)
    return sorted(
        {p.resolve() for p in inference.sources}
        | set(sources)
        | _included(units, project, INFER.includes)
    )


def _included(units, project, includes: tuple[Path, ...], missing: set[str] | None = None):
    """The project files the units include, transitively: the sources themselves and the
    headers found in the project's folders (CANN's own are not the project's). The names
    found nowhere, opsdk's headers (in ``includes``) included, go to ``missing``."""
    seen: set[Path] = set()
    todo: list[tuple[str, Path | None]] = [(text, None) for _, text in units]
    while todo:
        text, here = todo.pop()
        for name in _INCLUDE_LINE.findall(text):
            candidates = [Path(name)] if Path(name).is_absolute() else []
            candidates += [d / name for d in ((here,) if here else ()) + project]
            for path in candidates:
                if path.is_file() and not any(path.is_relative_to(d) for d in includes):
                    path = path.resolve()
                    if path not in seen:
                        seen.add(path)
                        todo.append((path.read_text(errors="replace"), path.parent))
                    break
            else:
                if missing is not None and not any((d / name).is_file() for d in includes):
                    missing.add(name)
    return seen


def _searched(units, project, top: Path, includes: tuple[Path, ...]) -> tuple[Path, ...]:
    """Folders of the project that resolve what its includes name and no folder of
    :func:`_include_dirs` has: a name matching one file's path end in the whole
    repository (its build adds such folders: ops-transformer's ``mc2/3rd``, ops-math's
    ``common/inc/op_api`` for a bare ``op_util.h``)."""
    found: list[Path] = []
    while True:
        missing: set[str] = set()
        _included(units, (*project, *found), includes, missing)
        added = False
        for name in sorted(missing):
            hits = [h for h in _headers(top) if h.as_posix().endswith(f"/{name}")]
            folder = Path(hits[0].as_posix()[: -len(name) - 1]) if len(hits) == 1 else None
            if folder is not None and folder not in found:
                found.append(folder)
                added = True
        if not added:
            return tuple(found)


@functools.lru_cache(maxsize=8)
def _headers(top: Path) -> tuple[Path, ...]:
    """Every header under ``top``, outside hidden and test folders."""
    return tuple(
        p
        for p in top.rglob("*.h*")
        if p.suffix in (".h", ".hpp")
        and not any(
            part.startswith(".") or part in ("test", "tests") for part in p.relative_to(top).parts
        )
    )


def _dtypes_header() -> str:
    """``ge::DataType`` and ``ge::Format`` with CANN's numbering, from opsdk's one dtype
    table and :data:`~opsdk.cann.infer.call.FORMATS`, with each dtype's name and size."""
    rows = list(types.DTYPES.values())
    enum = ", ".join(f"{d.ge} = {d.value}" for d in rows)
    names = "".join(f'    case ge::{d.ge}: return "{d.ge}";\n' for d in rows)
    top = max(d.value for d in rows) + 1
    formats = ", ".join(f"FORMAT_{name} = {i}" for i, name in enumerate(FORMATS))
    format_names = "".join(f'    case FORMAT_{name}: return "{name}";\n' for name in FORMATS)
    sizes = "".join(f"    case ge::{d.ge}: return {_size(d)};\n" for d in rows)
    return (
        "#pragma once\n#include <string>\n"
        f"namespace ge {{\nenum DataType {{ {enum}, DT_MAX = {top} }};\n"
        f"enum Format {{ {formats} }};\n"
        "inline const char *GetFormatName(Format format) {\n  switch (format) {\n"
        f'{format_names}    default: return "UNKNOWN";\n  }}\n}}\n}}\n'
        "inline std::string opsdk_dtype_name(ge::DataType dt) {\n  switch (dt) {\n"
        f"{names}    default: return std::to_string(static_cast<int>(dt));\n  }}\n}}\n"
        "inline int opsdk_dtype_size(ge::DataType dt) {\n  switch (dt) {\n"
        f"{sizes}    default: return -1;\n  }}\n}}\n"
    )


def _size(dtype) -> int:
    """A dtype's bytes per element from the bits its name states (``float32``, ``DT_INT64``,
    ``bool`` one byte); -1 for no whole number of bytes (``DT_INT4``, ``DT_STRING``)."""
    if (dtype.torch or dtype.ge) in ("bool", "DT_BOOL"):
        return 1
    bits = re.search(r"\d+", dtype.torch or dtype.ge)
    return int(bits.group()) // 8 if bits and int(bits.group()) % 8 == 0 else -1


def _first_error(stderr: str, directory: Path) -> str:
    """The compiler's first error as file:line and what it says (unknown symbol...)."""
    match = _ERROR.search(stderr)
    what = f"{match['where']}: {match['what']}" if match else stderr.strip().splitlines()[-1:]
    return f"does not compile: {what} (compiler output: {directory / 'build.log'})"
