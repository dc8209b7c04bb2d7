"""Column ``aot_eager``: the op under Dynamo and AOT Autograd, no backend compiler.

What any graph backend builds on: if this column fails, fix it before ``ge``
and ``npugraph_ex`` (see :mod:`opsdk.harness.core.compiled` for the checks).
"""

from __future__ import annotations

import contextlib

import torch._dynamo

from opsdk.harness.cell import Cell
from opsdk.harness.core import compiled


def run(cell: Cell, dump_dir=None) -> None:
    compiled.run(cell, "aot_eager", layer="aot")


def lowering(spec):
    return torch._dynamo.lookup_backend("aot_eager"), contextlib.nullcontext
