"""What a cell's result depends on, as digests: the op's source files and the platform.

The cell cache (:mod:`opsdk.harness.run.cache`) keys results by them, and a report records
them so that shard reports of different sources or versions are never merged
(:mod:`opsdk.report.merge`).

An op's sources are the files of its own package, the (sub)package whose ``OPS``
declares it most narrowly (``my_lib/`` for a package's first op, ``my_lib/my_mul/``
for one ``opsdk new --into`` added, ``bench_op_3/`` for a library module importing
separate packages), with the ``pyproject.toml`` beside it, plus what every op shares:
the target's files outside the other ops' packages (for a package's first op, its
files are shared: the added ops live inside it) and its project's ``pyproject.toml``.
Editing one added op reruns that op only; editing the first op or a shared helper
reruns all. Code outside those directories is not tracked. ``opsdk-waivers.toml`` is
not a source: waivers are applied to results as they are read.

Only regular files are read, a symlink's target when it is one (wherever it lives: it is
the code Python imports through the link); a dangling symlink (an editor's lock file
``.#kernels.py``), a FIFO, a socket or a device is no source, and is never opened. A
symlinked directory is not walked. A file is read once per process until its stat
changes (:func:`_content`), so the cell cache can digest the sources after every cell
for the cost of a ``stat`` per file.
"""

from __future__ import annotations

import hashlib
import os
import platform
import stat
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import opsdk
from opsdk.harness.cell import OpUnderTest

__all__ = ["Snapshot", "Sources", "changed_since", "digest", "op_sources", "versions"]

_OPSDK_DIR = Path(opsdk.__file__).resolve().parent
_PROJECT_FILE = "pyproject.toml"


def _files(root: Path, carved: frozenset[Path]) -> list[Path]:
    """Every file name under ``root`` (or ``root`` itself), without caches, hidden directories,
    the subtrees in ``carved`` and symlinked directories (never walked: no cycles)."""
    if root.is_file():
        return [root]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and d != "__pycache__" and here / d not in carved
        )
        found += [here / f for f in sorted(filenames) if not f.endswith((".pyc", ".pyo"))]
    return found


# What was read of each file this process: its stat then, and its content's sha256.
_read: dict[Path, tuple[tuple[int, ...], bytes]] = {}
# A file changed less than this before it was read may change again with the same size and
# timestamps (filesystems keep them at a clock tick, some at seconds): it is read each time.
_RACY_NS = 2_000_000_000
_UNREADABLE = b"unreadable"  # a file opsdk cannot read counts by its name alone


def _content(path: Path) -> bytes | None:
    """The sha256 of a regular file's bytes (through symlinks to one), or None for what is
    none: a dangling symlink (an editor's lock file), a FIFO, a socket, a device, a file
    gone since it was listed. Read again only when its stat changed since the last read
    (device, inode, size, mtime and ctime, which no one can set back), or is too recent
    to tell. Opened without blocking and checked again once open: a FIFO put in a file's
    place is never read."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    signature = _signature(found)
    known = _read.get(path)
    if known is not None and known[0] == signature:
        return known[1]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError:
        return _UNREADABLE
    with open(fd, "rb") as file:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return None
        content = hashlib.file_digest(file, "sha256").digest()
    settled = time.time_ns() - max(found.st_mtime_ns, found.st_ctime_ns) > _RACY_NS
    if settled and _signature(opened) == signature:
        _read[path] = (signature, content)
    return content


def _signature(found: os.stat_result) -> tuple[int, ...]:
    """What changes when a file's bytes do."""
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def _manifest(roots: list[Path], carved: frozenset[Path]) -> dict[Path, tuple[str, bytes]]:
    """The regular files under ``roots``: each file's name relative to its root and digest."""
    manifest = {}
    for root in roots:
        base = root.parent if root.is_file() else root
        for path in _files(root, carved):
            content = _content(path)
            if content is not None:
                manifest[path] = (path.relative_to(base).as_posix(), content)
    return manifest


def _combined(manifest: dict[Path, tuple[str, bytes]]) -> str:
    sha = hashlib.sha256()
    for name, content in manifest.values():
        sha.update(f"{name}\0".encode())
        sha.update(content)
    return sha.hexdigest()


def digest(roots: list[Path], carved: frozenset[Path] = frozenset()) -> str:
    """One digest of the regular files' paths (relative to their root) and contents."""
    return _combined(_manifest(roots, carved))


# A change is stamped by a clock that may lag the one time.time_ns() reads by a tick.
_TICK_NS = 20_000_000


def changed_since(paths: Iterable[Path], since_ns: int) -> list[Path]:
    """Those of ``paths`` changed (or gone) since ``since_ns`` (``time.time_ns()``), by their
    ctime: any change sets it, nothing sets it back."""
    late = []
    for path in paths:
        try:
            changed = os.stat(path).st_ctime_ns >= since_ns - _TICK_NS
        except OSError:
            changed = True
        if changed:
            late.append(path)
    return late


def _location(module: ModuleType) -> Path | None:
    """A package's directory, a plain module's file."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    return path.parent if hasattr(module, "__path__") else path


def _homes(ops: list[OpUnderTest]) -> dict[str, Path | None]:
    """Each op's own package: of the modules whose ``OPS`` list it, the one listing fewest
    ops (the deepest on a tie)."""
    overloads = {id(op.overload()): op.name for op in ops}
    holders: dict[str, list] = {op.name: [] for op in ops}
    for name, module in list(sys.modules.items()):
        declared = vars(module).get("OPS") if isinstance(module, ModuleType) else None
        if isinstance(declared, (tuple, list)):
            for overload in declared:
                if id(overload) in overloads:
                    holders[overloads[id(overload)]].append((len(declared), -name.count("."), name))
    return {
        op: _location(sys.modules[min(found)[2]]) if found else None
        for op, found in holders.items()
    }


def _beside(path: Path) -> list[Path]:
    project = path.parent / _PROJECT_FILE
    return [project] if project.is_file() else []


class Snapshot(NamedTuple):
    """The sources as they were read: each op's digest, and each file's."""

    digests: dict[str, str]  # by op name
    files: dict[Path, bytes]

    def edited(self, since: Snapshot) -> list[Path]:
        """The files added, removed or changed since ``since``."""
        return sorted(
            p
            for p in self.files.keys() | since.files.keys()
            if self.files.get(p) != since.files.get(p)
        )


class Sources:
    """The files each op of ``package`` depends on: the package's files outside the other
    ops' packages, shared by all, and an added op's own package. Where they are is found
    once (packages do not move); they are read each time asked, a file again only when it
    changed (:func:`_content`)."""

    def __init__(self, package: ModuleType, ops: list[OpUnderTest]):
        root = _location(package)
        own = {op: home for op, home in _homes(ops).items() if home is not None and home != root}
        carved = frozenset(own.values())
        self._ops = [op.name for op in ops]
        # The roots of each part (None: what all share) and the subtrees carved out of them.
        self._parts: dict[str | None, tuple[list[Path], frozenset[Path]]] = {
            None: ([root, *_beside(root)] if root else [], carved),
            **{op: ([home, *_beside(home)], carved - {home}) for op, home in own.items()},
        }

    def read(self) -> Snapshot:
        """Each op's source digest (its own package's files and what all share), and the files'."""
        manifests = {part: _manifest(*roots) for part, roots in self._parts.items()}
        parts = {part: _combined(found) for part, found in manifests.items()}
        digests = {
            op: hashlib.sha256(f"{parts[None]}:{parts.get(op, '')}".encode()).hexdigest()
            for op in self._ops
        }
        files = {
            path: content for found in manifests.values() for path, (_, content) in found.items()
        }
        return Snapshot(digests, files)


def op_sources(package: ModuleType, ops: list[OpUnderTest]) -> dict[str, str]:
    """Each op's source digest, by op name (:meth:`Sources.read`)."""
    return Sources(package, ops).read().digests


_versions: dict[str, str] | None = None


def versions() -> dict[str, str]:
    """opsdk (its version and the digest of its own files: an edit reruns every cell),
    Python, torch, the npu device and where TorchAir comes from."""
    global _versions
    if _versions is None:
        import torch

        from opsdk._runtime.device import ensure_npu
        from opsdk._runtime.locator import locate

        npu, torchair = ensure_npu(), locate()
        _versions = {
            "opsdk": opsdk.__version__,
            "opsdk_sources": digest([_OPSDK_DIR]),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "npu": npu.kind,
            "torch_npu": npu.torch_npu_version or "",
            "torchair": f"{torchair.mode} (torch_npu {torchair.torch_npu_version})",
        }
    return dict(_versions)
