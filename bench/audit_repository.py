"""`opsdk audit DIR` on an op library's work tree (issue 39): cold (an empty cell cache and
an empty cache of built Meta registrations: the C++ build included) and again with both
caches, each a fresh process in a temporary directory; wall and CPU time (the compiler's
included), the peak memory of a run, the verdicts and every finding.

    python bench/audit_repository.py WORK_TREE [-D NAME ...] [--checks CHECKS] [--json FILE]

The work tree comes from a mirror, e.g. ``git --git-dir=MIRROR archive HEAD | tar -x``;
vllm-ascend's is audited with ``-D VLLM_ENABLE_ATB_AND_DIRECT_KERNELS`` (its build's).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from audit_infer import cold_then_cached
from harness_throughput import _cpu

# issue 39: vllm-ascend's 55 ops on 2 cores, the C++ build included in the cold run
TARGETS = {"cold": 180, "cached": 30}
PEAK_MIB = 3 * 1024


def run(folder: Path, environ: dict, argv: list[str]) -> dict:
    """One audit process in ``folder``: its seconds, peak memory, verdicts, findings."""
    report = folder / "audit.json"
    command = [sys.executable, "-m", "opsdk", "audit", *argv, "--json", str(report)]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=environ)
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    if done.returncode not in (0, 1):  # 1: findings
        raise SystemExit(f"opsdk audit failed ({done.returncode}): {done.stderr[-3000:]}")
    results = json.loads(report.read_text())["results"]
    return {
        "wall_s": round(seconds, 1),
        "cpu_s": round(cpu, 1),
        # the largest child so far (ru_maxrss, KiB on Linux): the cold run comes first
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        "ops": len({r["op"] for r in results}),
        "cells": len(results),
        "cached": sum(r["cached"] for r in results),
        "verdicts": dict(Counter(r["status"] for r in results)),
        "findings": sorted(
            f"{r['op']} [{r['column']}]: {r['message'][:240]}"
            for r in results
            if r["status"] == "fail" and r["shapes"] == "static"
        ),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, help="the library's work tree")
    parser.add_argument("-D", dest="defines", action="append", default=[], help="a macro")
    parser.add_argument("--checks", help="opsdk audit --checks (default: all)")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    args = parser.parse_args(argv)
    flags = [str(args.tree.resolve()), *(f for d in args.defines for f in ("-D", d))]
    flags += ["--checks", args.checks] if args.checks else []
    rows = cold_then_cached(run, flags, "opsdk-audit-repository-")
    for name, row in rows.items():
        print(f"{name:7} {json.dumps({k: v for k, v in row.items() if k != 'findings'})}")
    for name, seconds in TARGETS.items():  # CPU too: wall on a shared machine says its load
        row = rows[name]
        print(
            f"target {name} <= {seconds} s: wall {row['wall_s']} s, CPU {row['cpu_s']} s; "
            f"peak {row['peak_rss_mib']} MiB (<= {PEAK_MIB})"
        )
    for finding in rows["cold"]["findings"]:
        print(f"  {finding}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
