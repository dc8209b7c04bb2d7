"""Which AscendC kernels the ``--ir`` paths hold, by the file names of their ``op_kernel``
folders: where the audit's ``ascendc`` check looks for an op type's kernel
(:mod:`opsdk.audit.checks.ascendc`). Light (no torch), so laying out a matrix asks it
without importing the check."""

from __future__ import annotations

import functools
from pathlib import Path

from opsdk.audit import inference

__all__ = ["applies", "op_folders"]


@functools.cache
def op_folders(roots: tuple[Path, ...]) -> dict[str, tuple[Path, ...]]:
    """Kernel source name (``rms_norm``) -> the op folders (each holding ``op_kernel``)
    with such a file under ``roots`` (an ``arch35`` one too), in the roots' order."""
    found: dict[str, list[Path]] = {}
    for root in roots:
        for kernels in sorted(Path(root).rglob("op_kernel")) if Path(root).is_dir() else ():
            for path in sorted(kernels.rglob("*.cpp")):
                folders = found.setdefault(path.stem, [])
                if kernels.parent not in folders:
                    folders.append(kernels.parent)
    return {name: tuple(folders) for name, folders in found.items()}


def applies(library) -> bool:
    """The ``ascendc`` check runs where the ``--ir`` paths hold C++ inference (what reads
    a node as GE hands it over) and AscendC kernels."""
    return inference.applies(library) and bool(op_folders(library.infer_roots))
