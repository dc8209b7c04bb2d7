"""A ``--from-cann`` op's AscendC tiling and kernel, copied into its package.

The ``ascendc`` column runs them (:mod:`opsdk.cann.kernel.sources`): the package holds
its own copy, ``cann_kernel/`` beside ``cann_infer/``, with the project's ``op_host`` and
``op_kernel`` layout: the tiling's sources and the project headers they include (a
repository's shared ones too, the project then below its place in the repository), the
op's definition (the outputs the runtime fills first) and the kernel folder.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from opsdk.cann import CannOp, infer
from opsdk.cann.kernel.scalars import one_element
from opsdk.cann.kernel.sources import FOLDER, sibling_kernels
from opsdk.cann.kernel.sources import find as find_sources

__all__ = ["copy", "with_scalars"]


def _project(source: Path) -> Path:
    """The AscendC project of the definition ``source`` (an ``op_host`` file, or the project)."""
    folder = Path(source).resolve().parent
    return folder.parent if folder.name == "op_host" else folder


def with_scalars(source: Path, op: CannOp) -> CannOp:
    """``op`` knowing the tensor inputs its kernel (in the project of ``source``) reads one
    element of, which its cases give sizes (1,) (:mod:`opsdk.cann.kernel.scalars`)."""
    found = find_sources(op.ir.op_type, _project(source))
    if found is None:
        return op
    inputs = [i.name for i in op.ir.inputs]
    return replace(op, scalars=one_element(found.entry.source.parent, inputs))


def copy(source: Path, op_type: str, package: Path) -> bool:
    """Copy ``op_type``'s AscendC sources from the project of its definition ``source``
    (an ``op_host`` file, or the project) into ``package/cann_kernel``; False when the
    project has no kernel entry for it."""
    root = _project(source)
    found = find_sources(op_type, root)
    if found is None:
        return False
    files = infer.project_files(found.tiling.as_inference(), root) if found.tiling else []
    files += sorted((root / "op_host").glob("*_def.cpp"))  # its outputs' InitValue (filled)
    siblings = sibling_kernels(found.entry).values()  # other ops' kernel headers it includes
    # Laid out under the folder the files share: the repository's common/inc kept where
    # the build looks for it, beside the project, and the other ops beside it.
    base = Path(os.path.commonpath([root, *files, *siblings]))
    target = package / FOLDER
    for path in files:
        (target / path.relative_to(base)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / path.relative_to(base))
    for kernels in (found.entry.source.parent, *siblings):
        shutil.copytree(kernels, target / kernels.relative_to(base), dirs_exist_ok=True)
    return True
