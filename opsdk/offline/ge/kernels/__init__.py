"""GE op kernels by family; importing this package registers them all."""

from opsdk.offline.ge.kernels import (  # noqa: F401  (imported to register their kernels)
    _creation,
    _elementwise,
    _indexing,
    _layout,
    _matmul,
    _memory,
    _reduce,
)
from opsdk.offline.ge.kernels._registry import Kernel, Node, lookup, op_types

__all__ = ["Kernel", "Node", "lookup", "op_types"]
