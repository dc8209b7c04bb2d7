"""Reports of a conformance run: the JSON file and the terminal matrix."""

from __future__ import annotations

import json
import platform
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from opsdk import _versions
from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns
from opsdk.runtime.device import choose

if TYPE_CHECKING:  # the results' module imports torch, which `opsdk doctor` does not need
    from opsdk.harness.model import Result

__all__ = ["Grid", "environment", "grid", "matrix", "problems", "summary", "write_json"]

_MARKS = {"pass": "✓", "fail": "F", "error": "E", "skip": "s", "xfail": "x"}
_LEGEND = "✓ pass, F fail, E error, s skip, x xfail"


def environment(backends=()) -> dict:
    """What the results were produced on: enough to reproduce or compare runs, with
    what each column of ``backends`` says of itself. Versions come from the installed
    metadata and nothing is set up, so ``opsdk doctor`` imports torch only to try an
    installed torch_npu."""
    npu = choose()
    from opsdk.offline.locator import locate

    torchair = locate()
    return {
        "opsdk": _versions.opsdk_version(),
        "torch": _versions.torch_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "npu": npu.kind,
        "npu_reason": npu.reason,
        "torch_npu": npu.torch_npu_version,
        "torchair": f"{torchair.mode} ({torchair.source or 'not fetched'}) at {torchair.path}",
        "ge_execution": "CANN" if npu.real else "opsdk GE reference executor (offline)",
    } | {
        key: value
        for name in columns.names()
        if name in backends
        for key, value in columns.get(name).environment().items()
    }


def write_json(path: Path, results: list[Result]) -> None:
    payload = {
        "environment": environment({r.backend for r in results}),
        "summary": dict(Counter(r.status for r in results)),
        "results": [r.to_json() for r in results],
    }
    Path(path).write_text(json.dumps(payload, indent=2) + "\n")


class Grid(NamedTuple):
    """The matrix's axes as the results fill them, in run order; every renderer uses it."""

    ops: list[str]
    backends: list[str]
    shapes: list[str]
    cell: dict[tuple[str, str, str], Result]  # (op, backend, shapes) -> result


def grid(results: list[Result]) -> Grid:
    return Grid(
        list(dict.fromkeys(r.op for r in results)),
        list(dict.fromkeys(r.backend for r in results)),
        [m for m in SHAPE_MODES if any(r.shapes == m for r in results)],
        {(r.op, r.backend, r.shapes): r for r in results},
    )


def problems(results: list[Result]) -> list[Result]:
    """What a reader must act on: failures, errors and stale waivers."""
    return [r for r in results if r.status in ("fail", "error") or r.stale_waiver]


def summary(results: list[Result]) -> str:
    """``40 pass, 2 fail``: the counts, in a fixed order."""
    counts = Counter(r.status for r in results)
    return ", ".join(f"{counts[k]} {k}" for k in _MARKS if counts[k]) or "no cells ran"


def matrix(results: list[Result]) -> str:
    """Ops as rows; per backend one column per shape mode (s/d/m); failures below."""
    ops, backends, shapes, cell = grid(results)
    status = {key: r.status for key, r in cell.items()}
    width = max(len(o) for o in ops)
    group = max(len(" ".join(m[0] for m in shapes)), *(len(b) for b in backends))
    head = [" " * width] + [b.ljust(group) for b in backends]
    sub = [" " * width] + [" ".join(m[0] for m in shapes).ljust(group) for _ in backends]
    lines = [" ".join(head).rstrip(), " ".join(sub).rstrip()]
    for op in ops:
        row = [op.ljust(width)]
        for b in backends:
            marks = [_MARKS.get(status.get((op, b, m)), "-") for m in shapes]
            row.append(" ".join(marks).ljust(group))
        lines.append(" ".join(row).rstrip())
    lines.append("(" + ", ".join(f"{m[0]} = {m}" for m in shapes) + "; " + _LEGEND + ")")
    if problems(results):
        lines.append("")
        lines += [r.describe() for r in problems(results)]
    lines.append("")
    lines.append(summary(results))
    return "\n".join(lines)
