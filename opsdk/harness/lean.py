"""Compile-time work that proves nothing about an op, skipped while compiled cells run.

Dynamo times every guard set it builds, for one compile metric
(``guard_latency_us``): ``profile_guard_manager`` flushes the CPU cache first,
which costs 15-60 ms per compile on a loaded 2-core machine, a third or more of
compiling a one-op graph. No check reads that metric, so compiled cells run with
a stub that reports 0 us. Guards are still built, installed and evaluated on
every call exactly as before; only the timing of them is skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock


def _no_latency(*args: object) -> float:
    return 0.0


@contextlib.contextmanager
def no_guard_profiling() -> Iterator[None]:
    import torch._dynamo.guards as guards

    with mock.patch.object(guards, "profile_guard_manager", _no_latency):
        yield
