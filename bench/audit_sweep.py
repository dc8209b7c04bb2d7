"""`opsdk audit torch_npu`: the whole sweep cold (an empty cell cache) and again with the
cache, each a fresh process as users run it, in a temporary directory (the cache lives
in the current one); CPU time (user + system) and wall time, the verdict counts and how
many ops were audited.

    python bench/audit_sweep.py [-k PATTERN] [--json FILE] [--versus-check OP]

``-k`` narrows the sweep (a smoke run); the issue's numbers are the whole one's.
``--versus-check OP`` also measures the ratio the issue asks for, side by side: one real
torch_npu op written as the op package tests/real_ops.py makes (its TorchAir-declared
cases as specs, a hand-written reference kernel), ``opsdk audit`` of that package
against ``opsdk check`` of it (the full matrix), fresh processes, the same cases.
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


def versus_check(op_name: str, rounds: int = 3) -> dict:
    """``opsdk audit`` and ``opsdk check`` of one real op's package: each process's CPU
    seconds and its cells' own seconds (without the imports both share), the median of
    ``rounds`` interleaved runs, and the ratios audit / check."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import real_ops

    runs = {"audit": [], "check": []}
    with tempfile.TemporaryDirectory(prefix="opsdk-audit-vs-") as folder:
        package = real_ops.write_package(real_ops.REAL_OPS[op_name], Path(folder))
        report = Path(folder) / "report.json"
        for _ in range(rounds):
            for command, seen in runs.items():
                argv = [sys.executable, "-m", "opsdk", command, str(package), "--no-cache"]
                cpu = _cpu()
                done = subprocess.run(
                    [*argv, "--json", str(report)], cwd=folder, capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise SystemExit(f"opsdk {command} failed: {done.stdout[-2000:]}")
                cells = json.loads(report.read_text())["results"]
                seen.append((_cpu() - cpu, sum(r["seconds"] for r in cells), len(cells)))
    row = {"op": op_name}
    for command, seen in runs.items():
        process, cells, count = sorted(seen)[len(seen) // 2]
        row[command] = {"cpu_s": round(process, 1), "cells_s": round(cells, 2), "cells": count}
    for key in ("cpu_s", "cells_s"):
        row[f"ratio_{key}"] = round(row["audit"][key] / row["check"][key], 2)
    return row


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", help="only ops whose name contains PATTERN")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument(
        "--versus-check", metavar="OP", help="a tests/real_ops.py op, e.g. npu_rms_norm"
    )
    args = parser.parse_args(argv)
    narrow = ["-k", args.pattern] if args.pattern else []
    with tempfile.TemporaryDirectory(prefix="opsdk-audit-bench-") as folder:
        rows = {"cold": audit(Path(folder), *narrow), "cached": audit(Path(folder), *narrow)}
    if args.versus_check:
        rows["versus_check"] = versus_check(args.versus_check)
    for name, row in rows.items():
        print(f"{name:7} {json.dumps(row)}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return rows


if __name__ == "__main__":
    main()
