"""Reports of a conformance run: the JSON file and the terminal matrix."""

from __future__ import annotations

import json
import platform
from collections import Counter
from pathlib import Path

import torch

import opsdk
from opsdk.device import ensure_npu
from opsdk.harness import npugraph
from opsdk.harness.model import SHAPE_MODES, Result

_MARKS = {"pass": "✓", "fail": "F", "error": "E", "skip": "s", "xfail": "x"}
_LEGEND = "✓ pass, F fail, E error, s skip, x xfail"


def environment(backends=()) -> dict:
    """What the results were produced on: enough to reproduce or compare runs."""
    npu = ensure_npu()
    from opsdk.runtime.torchair_locator import locate

    torchair = locate()
    return {
        "opsdk": opsdk.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "npu": npu.kind,
        "npu_reason": npu.reason,
        "torch_npu": npu.torch_npu_version,
        "torchair": f"{torchair.mode} ({torchair.source or 'not fetched'}) at {torchair.path}",
        "ge_execution": "CANN" if npu.real else "opsdk GE reference executor (offline)",
        **(npugraph.environment() if "npugraph_ex" in backends else {}),
    }


def write_json(path: Path, results: list[Result]) -> None:
    payload = {
        "environment": environment({r.backend for r in results}),
        "summary": dict(Counter(r.status for r in results)),
        "results": [r.to_json() for r in results],
    }
    Path(path).write_text(json.dumps(payload, indent=2) + "\n")


def matrix(results: list[Result]) -> str:
    """Ops as rows; per backend one column per shape mode (s/d/m); failures below."""
    backends = list(dict.fromkeys(r.backend for r in results))
    shapes = [m for m in SHAPE_MODES if any(r.shapes == m for r in results)]
    ops = list(dict.fromkeys(r.op for r in results))
    status = {(r.op, r.backend, r.shapes): r.status for r in results}
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
    problems = [r for r in results if r.status in ("fail", "error") or r.stale_waiver]
    if problems:
        lines.append("")
        lines += [r.describe() for r in problems]
    counts = Counter(r.status for r in results)
    lines.append("")
    lines.append(", ".join(f"{counts[k]} {k}" for k in _MARKS if counts[k]) or "no cells ran")
    return "\n".join(lines)
