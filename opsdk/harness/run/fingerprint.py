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
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from pathlib import Path
from types import ModuleType

import opsdk
from opsdk.harness.cell import OpUnderTest

__all__ = ["digest", "op_sources", "versions"]

_OPSDK_DIR = Path(opsdk.__file__).resolve().parent
_PROJECT_FILE = "pyproject.toml"


def _files(root: Path, carved: frozenset[Path]) -> list[Path]:
    """Every file under ``root`` (or ``root`` itself), without caches, hidden directories
    and the subtrees in ``carved``."""
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


def digest(roots: list[Path], carved: frozenset[Path] = frozenset()) -> str:
    """One digest of the files' paths (relative to their root) and contents."""
    sha = hashlib.sha256()
    for root in roots:
        base = root.parent if root.is_file() else root
        for path in _files(root, carved):
            sha.update(f"{path.relative_to(base).as_posix()}\0".encode())
            sha.update(hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()


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


def op_sources(package: ModuleType, ops: list[OpUnderTest]) -> dict[str, str]:
    """Each op's source digest, by op name: its own package's files and what all share."""
    root = _location(package)
    own = {name: home for name, home in _homes(ops).items() if home is not None and home != root}
    carved = frozenset(own.values())
    shared = digest([root, *_beside(root)] if root else [], carved)
    digests = {}
    for op in ops:
        home = own.get(op.name)
        mine = digest([home, *_beside(home)], carved - {home}) if home else ""
        digests[op.name] = hashlib.sha256(f"{shared}:{mine}".encode()).hexdigest()
    return digests


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
