"""Read the op definitions an AscendC op project has into one model.

An existing CANN op is declared in its project as msopgen JSON (what the kernel
project was generated from), ``REG_OP(...)`` prototype text (graph headers) or AscendC
``OpDef`` code (``op_host/<op>_def.cpp``, what the project builds from). Each becomes a
:class:`CannOp`: the GE IR with CANN's names (:class:`~opsdk._runtime.irdef.IrDef`) and,
per input and output, the data types and formats it accepts. ``opsdk new --from-cann``
writes the torch side from it and ``opsdk ir`` writes the formats back. One module per
format.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

from opsdk._runtime.warned import caught
from opsdk.cann import depends, files, msopgen, opdef, reg_op
from opsdk.cann._model import CannOp, CannWarning, counts, declared
from opsdk.errors import SpecError

__all__ = ["CannOp", "CannWarning", "counts", "declared", "format_of", "read", "warnings_said"]


def read(source: str | Path, op_types=None, skip_unreadable: bool = False) -> list[CannOp]:
    """Every op defined in ``source``: a file path or its text, msopgen JSON, text
    holding ``REG_OP(...)`` prototypes (a header, a docstring) or OpDef code (a file's
    ``#include "..."`` of its project's headers is followed). ``op_types`` keeps only
    the ops of those types (others are not parsed). ``skip_unreadable``: a ``REG_OP``
    that does not read is a warning naming it, the others are read. A file is read once
    per process while it is unchanged (``opsdk new`` asks for it in several steps): its
    warnings are given once."""
    text, where = _text_of(source)
    wanted = None if op_types is None else frozenset(op_types)
    if where == "<text>":
        return _read(text, where, wanted, skip_unreadable)
    return list(_read_file(text, where, wanted, skip_unreadable))


@functools.lru_cache(maxsize=64)
def _read_file(text: str, where: str, wanted, skip_unreadable: bool) -> tuple[CannOp, ...]:
    """The file's ops, with the inputs their InferShape beside it reads the value of
    marked (:mod:`.depends`)."""
    ops = _read(text, where, wanted, skip_unreadable)
    return tuple(depends.marked(ops, Path(where).parent, where))


def format_of(text: str) -> str:
    """Which format ``text`` is read as: ``msopgen JSON``, ``OpDef`` or ``REG_OP``."""
    if text.lstrip().startswith(("[", "{")):
        return "msopgen JSON"
    return "OpDef" if opdef.is_opdef(text) else "REG_OP"


def _read(text: str, where: str, wanted, skip_unreadable: bool = False) -> list[CannOp]:
    fmt = format_of(text)
    if fmt == "msopgen JSON":
        ops = msopgen.read(text, where, wanted)
    elif fmt == "OpDef":
        resolve = opdef.resolver(Path(where)) if where != "<text>" else None
        ops = opdef.read(text, where, wanted, resolve)
    else:
        ops = reg_op.read(text, where, wanted, skip_unreadable)
    if not ops:
        missing = f" of type {', '.join(sorted(wanted))}" if wanted else ""
        raise SpecError(
            f"{where}: no op definition{missing} found; give msopgen JSON, REG_OP(...) text "
            "or an OpDef .cpp"
        )
    return ops


def _text_of(source) -> tuple[str, str]:
    """The text of ``source`` and how messages name it. A string holding a definition
    (JSON, ``REG_OP``, several lines) is the text itself; any other string is a path."""
    if isinstance(source, str) and (
        "\n" in source
        or "REG_OP" in source
        or "OP_ADD(" in source
        or source.lstrip().startswith(("[", "{"))
    ):
        return source, "<text>"
    path = Path(source)
    return files.text(path), str(path)


@contextlib.contextmanager
def warnings_said(command: str) -> Iterator[None]:
    """What the readers repaired or skipped while the block ran, one line each on stderr
    (``opsdk new: warning: ...``), whether or not the command succeeds; other warnings
    as Python shows them."""
    with caught(record=True, always=(CannWarning,)) as heard:
        try:
            yield
        finally:
            for warning in heard or ():  # a list: caught(record=True)
                if not issubclass(warning.category, CannWarning):
                    warnings.showwarning(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )
                else:
                    print(f"{command}: warning: {warning.message}", file=sys.stderr)
