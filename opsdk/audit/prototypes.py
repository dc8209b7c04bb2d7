"""The CANN prototypes an audit checks GE nodes against, from ``--ir`` files or folders:
``REG_OP`` headers, AscendC ``OpDef`` sources (``op_host/*.cpp``) and msopgen JSON, read
by opsdk's CANN readers (:mod:`opsdk.cann`).

An op type defined more than once is taken from the ``REG_OP`` (the prototype GE itself
checks a node against), else the ``OpDef`` (what CANN's build generates that prototype
from), else the JSON; definitions that differ are said in a warning. In a folder, a file
the readers refuse is skipped with a warning; a file named on its own must read.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from opsdk import cann
from opsdk.cann import files
from opsdk.errors import SpecError

__all__ = ["Prototype", "read", "register"]

# Which definition of an op type wins, best first (see the module docstring).
_FORMATS = ("REG_OP", "OpDef", "msopgen JSON")


@dataclass(frozen=True)
class Prototype:
    """One op type's definition and the file it was read from."""

    op: cann.CannOp
    source: Path
    format: str


def read(paths) -> dict[str, Prototype]:
    """Every op type defined in ``paths`` (files or folders), by op type."""
    found: dict[str, Prototype] = {}
    for path in map(Path, paths):
        if path.is_dir():
            chosen = files.reg_op_files(path) + files.opdef_files(path) + files.msopgen_files(path)
            if not chosen:
                raise SpecError(
                    f"--ir {path}: no op definition found (REG_OP headers, op_host/*.cpp "
                    "OpDef sources, msopgen JSON): point --ir at them or their folder"
                )
            read_any = False
            for file in chosen:
                try:
                    ops = cann.read(file, skip_unreadable=True)
                except SpecError as err:  # one file refused does not stop the others
                    warnings.warn(f"--ir: skipped {err}", cann.CannWarning, stacklevel=2)
                    continue
                _add(found, ops, file)
                read_any = True
            if not read_any:
                raise SpecError(
                    f"--ir {path}: none of its {len(chosen)} CANN definition files reads "
                    "(the warnings say why): fix them, or point --ir at the files that read"
                )
        elif path.is_file():
            _add(found, cann.read(path, skip_unreadable=True), path)
        else:
            raise SpecError(f"--ir {path}: no such file or folder")
    return found


def _add(found: dict[str, Prototype], ops, source: Path) -> None:
    fmt = cann.format_of(files.head(source))
    for op in ops:
        new = Prototype(op, source, fmt)
        known = found.setdefault(op.ir.op_type, new)
        if known is new:
            continue
        best = _best(known, new)
        if known.op.ir != op.ir:
            warnings.warn(
                f"--ir: {source} ({fmt}) and {known.source} ({known.format}) define "
                f"{op.ir.op_type} differently: using {best.source}",
                cann.CannWarning,
                stacklevel=3,
            )
        found[op.ir.op_type] = best


def _best(a: Prototype, b: Prototype) -> Prototype:
    return a if _FORMATS.index(a.format) <= _FORMATS.index(b.format) else b


def register(found: dict[str, Prototype]) -> None:
    """Make the GE stand-in know the op types the library itself does not register, as
    the op's installed CANN package does on an NPU host (TorchAir's ``ge.custom_op``
    asks it for the op's inputs, outputs and attrs)."""
    from opsdk._runtime import irdef

    for op_type, prototype in found.items():
        if irdef.lookup(op_type) is None:
            irdef.register(prototype.op.ir)
