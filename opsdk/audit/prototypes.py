"""The CANN prototypes an audit checks GE nodes against, from ``--ir`` files or folders:
``REG_OP`` headers, AscendC ``OpDef`` sources (``op_host/*.cpp``) and msopgen JSON, read
by opsdk's CANN readers (:mod:`opsdk.cann`).

An op type defined more than once is taken from the ``REG_OP`` (the prototype GE itself
checks a node against), else the ``OpDef`` (what CANN's build generates that prototype
from), else the JSON; definitions that differ are said in a warning. In a folder, a file
the readers refuse is skipped with a warning; a file named on its own must read.

What the readers warn of a definition (an optional output made required, two files
defining an op type differently) is kept with it and said when an audit first uses it
(:func:`used`: inside the cell that did), so a folder of many op types says nothing of
those no op of the library lowers to but one line (:func:`unused`).
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from opsdk import cann
from opsdk.cann import files
from opsdk.errors import SpecError

__all__ = ["Prototype", "read", "register", "unused", "used"]

# Which definition of an op type wins, best first (see the module docstring).
_FORMATS = ("REG_OP", "OpDef", "msopgen JSON")


@dataclass(frozen=True)
class Prototype:
    """One op type's definition and the file it was read from."""

    op: cann.CannOp
    source: Path
    format: str
    warnings: tuple[str, ...] = ()  # what the readers said of it, kept until it is used


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
                    ops, said = _read(file)
                except SpecError as err:  # one file refused does not stop the others
                    warnings.warn(f"--ir: skipped {err}", cann.CannWarning, stacklevel=2)
                    continue
                _add(found, ops, said, file)
                read_any = True
            if not read_any:
                raise SpecError(
                    f"--ir {path}: none of its {len(chosen)} CANN definition files reads "
                    "(the warnings say why): fix them, or point --ir at the files that read"
                )
        elif path.is_file():
            _add(found, *_read(path), path)
        else:
            raise SpecError(f"--ir {path}: no such file or folder")
    return found


def _read(path: Path) -> tuple[list, tuple[str, ...]]:
    """The file's ops and the readers' warnings about them (others go on as raised)."""
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always", cann.CannWarning)
        ops = cann.read(path, skip_unreadable=True)
    for w in heard:
        if not issubclass(w.category, cann.CannWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return ops, tuple(str(w.message) for w in heard if issubclass(w.category, cann.CannWarning))


def _add(found: dict[str, Prototype], ops, said: tuple[str, ...], source: Path) -> None:
    fmt = cann.format_of(files.head(source))
    read = {op.ir.op_type for op in ops}
    # A REG_OP skipped as unreadable is no read op's to say: it waits for the unused line.
    unread = {s for s in said if (m := _SKIPPED.search(s)) and m[1] not in read}
    _unread.update(unread)
    said = tuple(s for s in said if s not in unread)
    for op in ops:
        mine = tuple(s for s in said if op.ir.op_type in s) or said
        new = Prototype(op, source, fmt, mine)
        known = found.setdefault(op.ir.op_type, new)
        if known is new:
            continue
        best = _best(known, new)
        differ = (
            (
                f"--ir: {source} ({fmt}) and {known.source} ({known.format}) define "
                f"{op.ir.op_type} differently: using {best.source}",
            )
            if known.op.ir != op.ir
            else ()
        )
        found[op.ir.op_type] = dataclasses.replace(best, warnings=best.warnings + differ)


_said: set[str] = set()  # the definition warnings said in this process
_SKIPPED = re.compile(r"\bREG_OP\((\w+)\)")
_unread: set[str] = set()  # warnings on definitions not read (no op to say them with)


def used(prototype: Prototype) -> None:
    """Say ``prototype``'s warnings, once a process: an audit uses its definition."""
    for message in prototype.warnings:
        if message not in _said:
            _said.add(message)
            warnings.warn(message, cann.CannWarning, stacklevel=2)


def unused(found: dict[str, Prototype]) -> str:
    """One line for the warnings of the definitions no cell used ("" when none)."""
    left = {t: p for t, p in found.items() if set(p.warnings) - _said}
    count = len({w for p in left.values() for w in p.warnings} - _said)
    lines = (
        [
            f"--ir: {count} warning(s) on the definitions of {len(left)} op type(s) no op lowered "
            f"to, not said one by one: {', '.join(sorted(left))}"
        ]
        if left
        else []
    )
    if _unread:
        lines.append(f"--ir: {len(_unread)} definition(s) not read: {'; '.join(sorted(_unread))}")
    return "\n".join(lines)


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
