"""`opsdk audit torch_npu --ir OPS_NN --ir OPS_TRANSFORMER` (issue 29 item 4): the whole
audit, every check, cold (an empty cell cache and an empty cache of compiled inference)
and again with both caches, each a fresh process in a temporary directory; CPU time (user
+ system, the compiler's included), wall time, the peak memory of a run, the verdicts, how
many ops the ``infer`` check held to a C++ InferShape (a pass or a finding) of how many,
its findings, and what the exploration of each op's input space cost and found.

    python bench/audit_infer.py OPS_NN OPS_TRANSFORMER [--checks CHECKS] [--json FILE]

The repositories are work trees (e.g. ``git --git-dir=MIRROR archive HEAD | tar -x``).
The cold run's opsdk cache is a fresh folder holding only a link to the torch-npu wheel's
Python already fetched (``opsdk fetch-torchair``), so every inference is compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness_throughput import _cpu

from opsdk._runtime import locator


def run(folder: Path, environ: dict, argv: list[str]) -> dict:
    """One audit process in ``folder``: its seconds, peak memory and verdicts."""
    report = folder / "audit.json"
    command = [sys.executable, "-m", "opsdk", "audit", "torch_npu", "--json", str(report), *argv]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environ)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    if done.returncode not in (0, 1):  # 1: findings
        raise SystemExit(f"opsdk audit failed ({done.returncode}): {done.stderr[-3000:]}")
    results = json.loads(report.read_text())["results"]
    infer = [r for r in results if r["column"] == "infer"]
    held = {r["op"] for r in infer if r["status"] in ("pass", "fail")}
    found = sorted({r["op"] for r in infer if r["status"] == "fail"})
    return {
        "wall_s": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        # the largest child so far (ru_maxrss, KiB on Linux): the cold run comes first
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "cells": len(results),
        "cached": sum(r["cached"] for r in results),
        "verdicts": dict(Counter(r["status"] for r in results)),
        "infer_verdicts": dict(Counter(r["status"] for r in infer)),
        "ops": len({r["op"] for r in results}),
        "held_to_cpp": len(held),
        "infer_findings": found,
        **_explored(infer),
    }


_EXPLORED = re.compile(r"explored \d+ cases \((?:cached|([\d.]+) s)\)")


def _explored(infer: list) -> dict:
    """The exploration's share (issue 40): ops explored, seconds per op (the largest and
    the median; a cached one costs 0), the ops it found a disagreement on."""
    seconds = {}
    for r in infer:  # a pass says its notes in its message
        for note in [r["message"], *(r.get("notes") or [])]:
            for spent in _EXPLORED.findall(note):
                seconds[r["op"]] = seconds.get(r["op"], 0.0) + float(spent or 0)
    spent = sorted(seconds.values())
    return {
        "explored_ops": len(seconds),
        "explore_s_per_op_max": round(spent[-1], 2) if spent else 0,
        "explore_s_per_op_median": round(spent[len(spent) // 2], 2) if spent else 0,
        "explore_findings": sorted(
            {r["op"] for r in infer if r["status"] == "fail" and "explored: " in r["message"]}
        ),
    }


def cold_then_cached(run, flags: list[str], prefix: str) -> dict:
    """``run(folder, environ, flags)`` twice in one temporary folder: cold (its opsdk
    cache holds only a link to the torch-npu wheel's Python already fetched) and cached."""
    wheel = locator.cache_root() / f"torch_npu-{locator.expected_torch_npu_version()}"
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        cache = Path(folder) / "opsdk-cache"
        cache.mkdir()
        (cache / wheel.name).symlink_to(wheel)
        environ = {**os.environ, locator.ENV_CACHE_DIR: str(cache)}
        rows = {"cold": run(Path(folder), environ, flags)}
        rows["cached"] = run(Path(folder), environ, flags)
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repos", nargs="+", type=Path, help="work trees for --ir")
    parser.add_argument("--checks", help="opsdk audit --checks (default: all)")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    flags = [f for repo in args.repos for f in ("--ir", str(repo.resolve()))]
    flags += ["--checks", args.checks] if args.checks else []
    rows = cold_then_cached(run, flags, "opsdk-audit-infer-")
    for name, row in rows.items():
        print(f"{name:7} {json.dumps(row)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
