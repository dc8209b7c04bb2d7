"""`opsdk audit torch_npu`: the whole sweep cold (an empty cell cache) and again with the
cache, each a fresh process as users run it, in a temporary directory (the cache lives
in the current one); CPU time (user + system) and wall time, the verdict counts and how
many ops were audited.

    python bench/audit_sweep.py [-k PATTERN] [--json FILE]

``-k`` narrows the sweep (a smoke run); the issue's numbers are the whole one's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness_throughput import _cpu


def audit(folder: Path, *args: str) -> dict:
    """One `opsdk audit torch_npu` process in ``folder``: its seconds and verdicts."""
    report = folder / "audit.json"
    argv = [sys.executable, "-m", "opsdk", "audit", "torch_npu", "--json", str(report), *args]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    if done.returncode not in (0, 1):  # 1: findings, the sweep's normal outcome
        raise SystemExit(f"opsdk audit failed ({done.returncode}): {done.stderr.strip()}")
    results = json.loads(report.read_text())["results"]
    audited = [line for line in done.stdout.splitlines() if line.startswith("audited ")]
    return {
        "wall_s": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        "cells": len(results),
        "cached": sum(r["cached"] for r in results),
        "verdicts": dict(Counter(r["status"] for r in results)),
        "audited": audited[0].split(";")[0] if audited else "",
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", help="only ops whose name contains PATTERN")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    narrow = ["-k", args.pattern] if args.pattern else []
    with tempfile.TemporaryDirectory(prefix="opsdk-audit-bench-") as folder:
        rows = {"cold": audit(Path(folder), *narrow), "cached": audit(Path(folder), *narrow)}
    for name, row in rows.items():
        print(f"{name:7} {json.dumps(row)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
