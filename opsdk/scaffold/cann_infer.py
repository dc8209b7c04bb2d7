"""A ``--from-cann`` op's C++ shape and dtype inference, copied into its package.

The package holds its own copy (``cann_infer/``, the project's layout kept below the
folder searched) so it is checked wherever it goes: the inference is the user's own
code, and the ``ge`` column holds the op's fake function to it (see
:mod:`opsdk.cann.infer`). Its ``ir.py`` names the folder (``IrDef.infer_root``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from opsdk.cann import infer

__all__ = ["FOLDER", "copy", "find"]

FOLDER = "cann_infer"


def find(source: Path, op_type: str) -> tuple[infer.Inference, Path] | None:
    """The inference of ``op_type`` near its definition ``source`` and the folder it was
    found in: the definition's folder (an ``op_host``, or a project holding one)."""
    root = Path(source).resolve().parent
    found = infer.find(op_type, root)
    return (found, root) if found else None


def copy(found: tuple[infer.Inference, Path], package: Path) -> None:
    """Copy the inference's files into ``package/cann_infer``, as laid out under its folder
    (a header included from outside that folder is not copied: the build says so)."""
    inference, root = found
    for path in infer.project_files(inference, root):
        if path.is_relative_to(root):
            target = package / FOLDER / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
