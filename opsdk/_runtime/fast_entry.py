"""torch.compile traces the fast entry point of a ``--style cpp`` op.

The entry point (``opsdk/include/opsdk/fast_entry.h``) is a C function, which
Dynamo cannot look into: :func:`traceable` registers it with
``torch.compiler.substitute_in_graph``, so that Dynamo traces in its place a
polyfill calling the op's OpOverload, which puts the op in the graph.
Registering imports ``torch._dynamo`` (about a second on 2 cores), which a
process that never compiles should not pay on every import of an op package:
until something imports it, entries wait, and are registered right after it is
imported (by ``torch.compile`` or anything else).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable

import torch

_DYNAMO = "torch._dynamo"
_waiting: dict[Callable, torch._ops.OpOverload] = {}
_registered: set[Callable] = set()


def traceable(entry: Callable, overload: torch._ops.OpOverload) -> Callable:
    """Return ``entry``, registered so that torch.compile traces a call of it as a
    call of ``overload``. Registering the same entry again does nothing: a package
    imported twice gets the same C function from its library."""
    if entry in _registered or entry in _waiting:
        return entry
    if _DYNAMO in sys.modules:
        _register(entry, overload)
    else:
        if not _waiting:
            sys.meta_path.insert(0, _AfterDynamoImport())
        _waiting[entry] = overload
    return entry


def _register(entry: Callable, overload: torch._ops.OpOverload) -> None:
    @torch.compiler.substitute_in_graph(entry)
    def polyfill(*args, **kwargs):
        return overload(*args, **kwargs)

    _registered.add(entry)


def _register_waiting() -> None:
    while _waiting:
        _register(*_waiting.popitem())


class _AfterDynamoImport(importlib.abc.MetaPathFinder):
    """Finds torch._dynamo as the path finder does, with a loader that registers the
    waiting entries once the module has run; then steps aside."""

    def find_spec(self, name, path, target=None):
        if name != _DYNAMO:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _register_waiting()

        spec.loader.exec_module = exec_module
        return spec
