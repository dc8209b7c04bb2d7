"""Check ``registry``: what a repository's sources register for the op agrees with its
schema (:mod:`opsdk.audit.repository` reads them): a registration names a defined op,
the op has a Meta or fake function, the kernel writes only what the schema marks
``(a!)`` (a Python kernel's writes seen by running it on CPU:
:mod:`opsdk.audit.repository.pywrites`), an in-place op returns what it writes, the
schema parses. Each finding names both places, file:line."""

from __future__ import annotations

from opsdk.audit.repository import pywrites
from opsdk.harness.cell import CellFailure

__all__ = ["check"]


def check(library, op, shapes: str) -> list[str]:
    written, notes = pywrites.undeclared(op) if op.op is not None else ([], [])
    if op.findings or written:
        raise CellFailure("registry", "; ".join([*op.findings, *written]))
    return notes
