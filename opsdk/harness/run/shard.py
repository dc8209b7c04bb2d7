"""`opsdk check --shard I/N`: a deterministic, balanced share of the matrix, by whole ops.

Whole ops, because an op's cells share work within a run (each case is traced once for
every compiled column: :mod:`opsdk.harness.core.shared_trace`). Ops are placed heaviest first
on the lightest shard (ties: matrix order, lowest shard), weighed by the seconds their
cells took when they last ran (:meth:`opsdk.harness.run.cache.CellCache.durations`), a cell
never timed weighing the mean of those that were (one unit when none was). Every shard
computes the same plan from the same cells and durations; each report records the plan,
so reports of shards that planned differently (their caches differed) are not merged.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opsdk.errors import OpsdkError

if TYPE_CHECKING:  # the CLI parser reads this module: no torch
    from opsdk.harness.cell import Cell

__all__ = ["Shard", "parse", "plan"]


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``, and the plan every shard shares."""

    index: int
    count: int
    ops: dict[str, int]  # every op of the matrix -> its shard
    cells: tuple[str, ...]  # every cell id of the matrix, in matrix order

    def select(self, cells: list[Cell]) -> list[Cell]:
        return [c for c in cells if self.ops[c.op.name] == self.index]

    def to_json(self) -> dict:
        return {"index": self.index, "count": self.count, "ops": self.ops, "cells": self.cells}


def parse(text: str) -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N (argparse type)."""
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N with 1 <= I <= N, e.g. 2/3")
    return i, n


def plan(cells: list[Cell], index: int, count: int, durations: dict[str, float]) -> Shard:
    """Shard ``index`` of ``count`` over ``cells`` (the whole matrix, in matrix order).
    A shard holds whole ops: more shards than ops is refused, as some would be empty."""
    unit = sum(durations.values()) / len(durations) if durations else 1.0
    weight: dict[str, float] = {}
    for cell in cells:
        weight[cell.op.name] = weight.get(cell.op.name, 0.0) + durations.get(cell.id, unit)
    if count > len(weight):
        raise OpsdkError(
            f"--shard {index}/{count}: the matrix has {len(weight)} op(s) and a shard runs "
            f"whole ops: split it into at most {len(weight)} shards (e.g. --shard 1/{len(weight)})"
        )
    position = {op: i for i, op in enumerate(weight)}
    load = [0.0] * count
    ops = {}
    for op in sorted(weight, key=lambda o: (-weight[o], position[o])):
        lightest = min(range(count), key=lambda s: (load[s], s))
        load[lightest] += weight[op]
        ops[op] = lightest + 1
    return Shard(index, count, {op: ops[op] for op in weight}, tuple(c.id for c in cells))
