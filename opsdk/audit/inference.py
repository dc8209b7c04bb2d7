"""Which C++ inference the ``--ir`` paths hold, by op type: what the audit's ``infer``
check holds Meta functions to (:mod:`opsdk.audit.checks.infer`). Light (no torch), so
laying out a matrix asks it without importing the check."""

from __future__ import annotations

import functools
from pathlib import Path

from opsdk.cann.infer import sources

__all__ = ["applies", "index"]

_EXPERIMENTAL = "experimental"


@functools.cache
def index(roots: tuple[Path, ...]) -> dict[str, tuple[sources.Inference, Path]]:
    """Every op type's C++ inference with an InferShape under ``roots`` (files or folders;
    the first root's wins), with the folder its project's includes are searched from."""
    found: dict[str, tuple[sources.Inference, Path]] = {}
    for root in roots:
        for part in _parts(root):
            for op_type, inference in sources.find_all(part).items():
                if inference.infer_shape is not None:
                    found.setdefault(op_type, (inference, root if root.is_dir() else root.parent))
    return found


def _parts(root: Path) -> list[Path]:
    """``root``'s folders, an ``experimental`` one last: an op the project also ships
    there (ops-nn's ``experimental/``) is taken from its production folder."""
    if not root.is_dir():
        return [root]
    children = sorted(root.iterdir(), key=lambda p: (p.name == _EXPERIMENTAL, p.name))
    skipped = lambda p: p.name.startswith(".") or p.name in ("test", "tests")  # noqa: E731
    return [p for p in children if (p.is_dir() or p.suffix == ".cpp") and not skipped(p)]


def applies(library) -> bool:
    """The ``infer`` check runs where the ``--ir`` paths hold C++ inference."""
    return bool(library.infer_roots) and bool(index(library.infer_roots))
