"""The cells that run together, so a column can leave to another what both would do.

Within one run (``opsdk check``, a pytest session): the compiled columns share
each case's trace (:mod:`opsdk.harness.shared_trace`), and ``opcheck`` leaves
AOT dispatch to ``aot_eager`` when that column runs too (:mod:`opsdk.harness.opcheck`).
Outside a run (one :func:`opsdk.harness.run_cell` on its own) every column does
all of its own work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

from opsdk.axes import COMPILED_BACKENDS

_backends: frozenset[str] = frozenset()


@contextlib.contextmanager
def one_run(backends: Iterable[str]) -> Iterator[None]:
    """Cells of ``backends`` run together until the context ends."""
    global _backends
    previous, _backends = _backends, frozenset(backends)
    try:
        if len(_backends.intersection(COMPILED_BACKENDS)) > 1:
            from opsdk.harness import shared_trace

            with shared_trace.sharing(_backends):
                yield
        else:
            yield
    finally:
        _backends = previous


def includes(backend: str) -> bool:
    """Whether the current run has cells of ``backend``."""
    return backend in _backends
