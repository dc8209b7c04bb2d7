"""Check ``registry``: what a repository's sources register for the op agrees with its
schema (:mod:`opsdk.audit.repository` reads them): a registration names a defined op,
the op has a Meta or fake function, the kernel writes only what the schema marks
``(a!)``, an in-place op returns what it writes, the schema parses. Each finding names
both places, file:line."""

from __future__ import annotations

from opsdk.harness.cell import CellFailure

__all__ = ["check"]


def check(library, op, shapes: str) -> list[str]:
    if op.findings:
        raise CellFailure("registry", "; ".join(op.findings))
    return []
