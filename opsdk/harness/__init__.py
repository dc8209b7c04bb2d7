"""The conformance harness: every op of a package through every backend column.

The public front: :mod:`opsdk.harness.columns` (the registry of columns) loads
without torch, for the CLI parser and the pytest plugin; the matrix functions
load torch with their first use.
"""

from __future__ import annotations

from opsdk.harness import columns

__all__ = [
    "Cell",
    "Result",
    "cached",
    "cells",
    "columns",
    "declared_ops",
    "discover",
    "not_run",
    "one_run",
    "run_cell",
    "run_matrix",
]

_MATRIX = (
    "cached",
    "cells",
    "declared_ops",
    "discover",
    "not_run",
    "one_run",
    "run_cell",
    "run_matrix",
)
_MODEL = ("Cell", "Result")


def __getattr__(name: str):
    if name in _MATRIX:
        from opsdk.harness.run import _matrix

        return getattr(_matrix, name)
    if name in _MODEL:
        from opsdk.harness import cell

        return getattr(cell, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
