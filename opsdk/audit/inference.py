"""Which C++ inference the ``--ir`` paths hold, by op type: what the audit's ``infer``
check holds Meta functions to (:mod:`opsdk.audit.checks.infer`). Light (no torch), so
laying out a matrix asks it without importing the check."""

from __future__ import annotations

import functools
from pathlib import Path

from opsdk.cann.infer import sources

__all__ = ["applies", "index"]


@functools.cache
def index(roots: tuple[Path, ...]) -> dict[str, tuple[sources.Inference, Path]]:
    """Every op type's C++ inference with an InferShape under ``roots`` (files or folders;
    the first root's wins), with the folder its project's includes are searched from."""
    found: dict[str, tuple[sources.Inference, Path]] = {}
    for root in roots:
        for op_type, inference in sources.find_all(root).items():
            if inference.infer_shape is not None:
                found.setdefault(op_type, (inference, root if root.is_dir() else root.parent))
    return found


def applies(library) -> bool:
    """The ``infer`` check runs where the ``--ir`` paths hold C++ inference."""
    return bool(library.infer_roots) and bool(index(library.infer_roots))
