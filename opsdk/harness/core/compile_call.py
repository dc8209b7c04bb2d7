"""How the compiled columns compile an op: as a user does, one function per call site.

Below both :mod:`opsdk.harness.core.compiled` and :mod:`opsdk.harness.core.shared_trace`,
which each compile the op this way.
"""

from __future__ import annotations

import torch


def compile_call(op, backend, shapes: str, *, name: str | None = None):
    """A function calling ``op`` under torch.compile, as a user compiles one. Dynamo
    keeps its cache and per-code state on the code object and its name: a ``name``
    gives the function a code object of its own, so its compiles are its own."""

    def call_op(*args, **kwargs):
        return op(*args, **kwargs)

    if name is not None:
        call_op.__code__ = call_op.__code__.replace(co_name=name)
    return torch.compile(call_op, backend=backend, fullgraph=True, dynamic=shapes != "static")
