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
from opsdk.harness.model import Result

_MARKS = {"pass": "ok", "fail": "FAIL", "error": "ERROR", "skip": "skip", "xfail": "xfail"}


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
    """Ops as rows, backend/shape cells as columns; failures listed below."""
    columns = list(dict.fromkeys(f"{r.backend}/{r.shapes}" for r in results))
    ops = list(dict.fromkeys(r.op for r in results))
    cell = {(r.op, f"{r.backend}/{r.shapes}"): r for r in results}
    width = max([len(o) for o in ops] + [2])
    widths = [max(len(c), 5) for c in columns]
    lines = [" ".join([" " * width] + [c.ljust(w) for c, w in zip(columns, widths, strict=True)])]
    for op in ops:
        row = [op.ljust(width)]
        for c, w in zip(columns, widths, strict=True):
            r = cell.get((op, c))
            row.append((_MARKS[r.status] if r else "-").ljust(w))
        lines.append(" ".join(row).rstrip())
    problems = [r for r in results if r.status in ("fail", "error")]
    if problems:
        lines.append("")
        lines += [r.describe() for r in problems]
    counts = Counter(r.status for r in results)
    lines.append("")
    lines.append(", ".join(f"{counts[s]} {s}" for s in _MARKS if counts[s]) or "no cells ran")
    return "\n".join(lines)
