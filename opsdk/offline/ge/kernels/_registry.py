"""The kernel registry: a GE op type -> a torch function with GE's semantics.

A kernel takes the node (its attributes by name) and its inputs by position and
returns the node's outputs; the family modules register theirs with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from opsdk._registry import Registry
from opsdk.offline.ge.errors import GeExecutionError
from opsdk.offline.ge.proto import decode_attr

_REQUIRED = object()


class Node:
    """One op of the graph as a kernel sees it: its attributes and identity."""

    def __init__(self, op):
        self.op = op
        self.name = op.name
        self.type = op.type

    def attr(self, name: str, default=_REQUIRED):
        if name not in self.op.attr:
            if default is _REQUIRED:
                raise GeExecutionError(f"required attr {name!r} is missing")
            return default
        return decode_attr(self.op.attr[name])

    @property
    def num_outputs(self) -> int:
        return len(self.op.output_desc)


Kernel = Callable[[Node, list], list]
_KERNELS: Registry[str, Kernel] = Registry(
    "reference kernel of GE op type", "keep one kernel per op type"
)


def register(*op_types: str) -> Callable[[Kernel], Kernel]:
    """Decorator: ``fn`` is the kernel of each of ``op_types`` (a type with another
    kernel already is a :class:`~opsdk._registry.Conflict`: the executor would judge
    with whichever module was imported last)."""

    def add(fn: Kernel) -> Kernel:
        for op_type in op_types:
            _KERNELS.add(op_type, fn)
        return fn

    return add


def lookup(op_type: str) -> Kernel | None:
    return _KERNELS.get(op_type)


def op_types() -> list[str]:
    return sorted(_KERNELS.keys())


def ints(t) -> list[int]:
    """A shape/axes/perm operand (an int tensor) as a Python list."""
    return [int(v) for v in torch.as_tensor(t).reshape(-1).tolist()]


def scalar_int(t) -> int:
    values = ints(t)
    if len(values) != 1:
        raise GeExecutionError(f"expected a single axis value, got {values}")
    return values[0]


def unsupported(what: str):
    """Refuse, naming what: the executor never guesses at semantics it lacks."""
    raise GeExecutionError(f"{what} is not supported by the reference executor")
