"""Who watches the custom op nodes the reference executor runs.

GE runs a node's C++ shape inference when it compiles and runs a graph; offline the
executor runs the node's CPU reference instead. A watcher (the harness holding a fake
function to the op's C++ inference) is told of every custom node run: the node as
TorchAir built it (its descriptors are what was traced), its inputs, its outputs, and
its inputs as GE hands them to InferShape at compile (``executor.AtCompile``: the
shapes GE inferred for the nodes before it, a Const's value; None for an absent one).
A watcher must not raise: it records, and its owner judges when the case is done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

__all__ = ["notify", "watching"]

_WATCHERS: list[Callable] = []


@contextlib.contextmanager
def watching(watcher: Callable) -> Iterator[None]:
    """Call ``watcher(node_def, inputs, outputs, at_compile)`` for each custom node run in
    the block."""
    _WATCHERS.append(watcher)
    try:
        yield
    finally:
        _WATCHERS.remove(watcher)


def notify(node_def, inputs: list, outputs: list, at_compile: list) -> None:
    for watcher in list(_WATCHERS):
        watcher(node_def, inputs, outputs, at_compile)
