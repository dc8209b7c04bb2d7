"""Build a ``--style cpp`` op library once; load it on every import.

Such a package keeps its schema and kernels in one ``.cpp`` file, which its
``__init__`` hands to :func:`load_library`. Building it is torch's job
(``torch.utils.cpp_extension.load``: ninja, the system C++ compiler, torch's
headers and flags) and costs seconds, so the result is cached in torch's
extension directory (``$TORCH_EXTENSIONS_DIR``, default
``~/.cache/torch_extensions``) under ``opsdk/``, keyed on everything that shapes
the binary: the source and the headers beside it, torch and Python versions,
and the flags. An import that finds its key only ``dlopen``s the library: no
compiler, no ninja. Editing the source gives a new key, hence a rebuild.

A library whose op has a fast Python entry point is also a Python extension
module (:func:`load_module`); its source includes opsdk's own header
``opsdk/fast_entry.h`` from :data:`INCLUDE`, which is part of the key too.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib.machinery import ExtensionFileLoader, ModuleSpec
from pathlib import Path
from types import ModuleType

import torch
from torch.utils import cpp_extension

from opsdk._runtime.device import ensure_npu
from opsdk._runtime.locator import user_cache_dir
from opsdk.errors import BuildError

# Part of every cache key: bump it when the way libraries are built changes.
RECIPE_VERSION = 2
STAMP = "opsdk-build.json"
# opsdk's C++ headers, on every build's include path.
INCLUDE = Path(__file__).resolve().parent / "include"


# torch's JIT builds pass no optimization flag, so the code would build at -O0: a cpp
# op's host path (argument handling, its fast entry point) is about 1.5x slower so.
OPTIMIZE = ("-O2",)


@dataclass(frozen=True)
class Recipe:
    """What the build adds to torch's own compiler and linker flags."""

    cflags: tuple[str, ...] = OPTIMIZE
    include_paths: tuple[str, ...] = ()
    ldflags: tuple[str, ...] = ()


def recipe(real_npu: bool) -> Recipe:
    """Offline, torch's flags and :data:`OPTIMIZE` are all the kernels need. On an NPU
    host the build defines ``OPSDK_WITH_CANN``, so the kernels' ``EXEC_NPU_CMD`` branch compiles,
    against torch_npu's headers (ACL's included) and library, as torch_npu's own
    ``NpuExtension`` sets them up."""
    if not real_npu:
        return Recipe()
    import torch_npu

    root = Path(torch_npu.__file__).resolve().parent
    return Recipe(
        cflags=(*OPTIMIZE, *cann_defines()),
        include_paths=cann_include_paths(root),
        ldflags=(f"-L{root / 'lib'}", "-ltorch_npu"),
    )


def cann_defines() -> tuple[str, ...]:
    """The CANN branch's defines: ``OPSDK_WITH_CANN``, and the torch version op-plugin's
    headers select code by (``CURRENT_VERSION``, ``V2R13`` for torch 2.13; op-plugin's
    build defines it, its headers do not)."""
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return ("-DOPSDK_WITH_CANN", f"-DCURRENT_VERSION=V{major}R{minor}")


def cann_include_paths(torch_npu_root: Path) -> tuple[str, ...]:
    """torch_npu's headers a kernel's CANN branch compiles against: its own, ACL's, and
    op-plugin's (``op_plugin/utils/op_api_common.h``: ``EXEC_NPU_CMD``)."""
    include = torch_npu_root / "include"
    return tuple(str(include / sub) for sub in ("", "third_party/acl/inc", "third_party/op-plugin"))


def reference(op, *args, **kwargs):
    """Run a cpp op's CPU kernel, its reference, on fake or meta tensors, whatever device they
    stand for: the op's fake function while the reference uses tensor ops only (a C++
    kernel's ``at::`` calls on fake tensors reach the fake mode like any others)."""
    return op.redispatch(_CPU, *args, **kwargs)


_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def build_root() -> Path:
    """Where opsdk keeps built op libraries, inside torch's extension directory
    (``$TORCH_EXTENSIONS_DIR`` honoured as torch's own JIT builds honour it; by default
    ``torch_extensions/`` in the user's cache directory, as torch's, but never ``/.cache``
    when ``HOME`` is empty: :func:`opsdk._runtime.locator.user_cache_dir`)."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or user_cache_dir() / "torch_extensions"
    return Path(root) / "opsdk"


def cache_key(source: Path, how: Recipe) -> str:
    """A digest of all that goes into the binary; headers next to the source count
    (a helper header a kernel includes), and opsdk's own."""
    digest = hashlib.sha256()
    digest.update(
        repr((RECIPE_VERSION, torch.__version__, sys.implementation.cache_tag, how)).encode()
    )
    headers = sorted(source.parent.glob("*.h")) + sorted(source.parent.glob("*.hpp"))
    for path in (source, *headers, *sorted(INCLUDE.rglob("*.h"))):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def load_library(source: str | Path) -> Path:
    """Load the op library built from ``source``, building it first if nothing cached matches.

    Returns the library's path. Concurrent first imports (``pytest -n``) build it
    once: the others wait on a file lock that is released when its holder exits,
    however it exits, so a killed build never wedges the next one.
    """
    source = Path(source).resolve()
    how = recipe(ensure_npu().real)
    name = f"{source.stem}_{cache_key(source, how)}"
    directory = build_root() / name
    library = directory / f"{name}.so"
    if not _built(directory, library):
        directory.mkdir(parents=True, exist_ok=True)
        with _locked(directory.with_name(f"{name}.lock")):
            if not _built(directory, library):
                _build(source, name, directory, how)
    torch.ops.load_library(str(library))
    return library


def load_module(source: str | Path) -> ModuleType:
    """:func:`load_library`, then the library as the Python extension module its source
    defines, ``_<stem>`` (``PyInit__<stem>``): the op's fast entry point.

    The module is not put in ``sys.modules``: its package holds it. Loading it again
    gives the same module (CPython keeps single-phase extension modules by file)."""
    library = load_library(source)
    name = f"_{Path(source).stem}"
    loader = ExtensionFileLoader(name, str(library))
    module = loader.create_module(ModuleSpec(name, loader, origin=str(library)))
    loader.exec_module(module)
    return module


def _built(directory: Path, library: Path) -> bool:
    # The stamp is written last, so a build that died half-way does not count.
    return (directory / STAMP).is_file() and library.is_file()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _build(source: Path, name: str, directory: Path, how: Recipe) -> None:
    print(
        f"opsdk: compiling {source.name} (first import only; cached in {directory})",
        file=sys.stderr,
        flush=True,
    )
    # torch's own lock file: one left by a killed build would make load() wait forever;
    # under our lock nobody else can be building this directory.
    (directory / "lock").unlink(missing_ok=True)
    start = time.perf_counter()
    try:
        cpp_extension.load(
            name=name,
            sources=[str(source)],
            extra_cflags=list(how.cflags),
            extra_include_paths=[str(INCLUDE), *how.include_paths],
            extra_ldflags=list(how.ldflags),
            build_directory=str(directory),
            is_python_module=False,
            verbose=False,
        )
    except RuntimeError as err:
        log = directory / "build.log"
        log.write_text(str(err))
        raise BuildError(
            f"building {source} failed: {_first_error(str(err))}; fix it (full output: {log})"
        ) from None
    stamp = {"source": str(source), "seconds": round(time.perf_counter() - start, 2)}
    stamp.update(torch=torch.__version__, **asdict(how))
    (directory / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")


def _first_error(output: str) -> str:
    """The compiler's first ``error:`` line, else the first line (e.g. no ninja, no compiler)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error:" in line), lines[0] if lines else "no output")
