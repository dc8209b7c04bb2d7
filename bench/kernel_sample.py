"""Issue 38's agreement sample: 20 production 910B vector ops of hicann's ops-nn and
ops-math (``bench/_references.py``: where each is, its torch reference, its cases), made
into one package as a user makes it (``opsdk new --from-cann`` of their folders, the
references and cases written in) and checked in the ``ascendc`` column (each op's own
TilingFunc per case, its kernel built for the case's dtypes and key and run on the
stand-in, its outputs held to the reference): per op ``agree`` (every case passes),
``disagree`` (a wrong number or a finding, with the message) or ``not run`` (the reason).

Two runs of ``opsdk check``, fresh processes, one cache directory (``OPSDK_CACHE_DIR``)
whose precompiled stand-ins are built first and reported apart: ``cold`` (each op's
tiling and kernel compiled) and ``cached``; per op its cell's seconds in each (the
compiles, the tiling runs, the launches and the reference), and each run's wall and CPU
(g++ and the workers included).

    python bench/kernel_sample.py [-k OP[,OP...]] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _references

CHECK = ("--backend", "ascendc", "--shapes", "static", "--contexts", "none", "--no-cache")


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv, environ) -> tuple[float, float, subprocess.CompletedProcess]:
    """``argv`` run to its end: wall and CPU seconds, and the process."""
    wall, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(argv, capture_output=True, text=True, env=environ)
    return time.perf_counter() - wall, children_cpu() - cpu, done


def verdict(cell: dict) -> tuple[str, str]:
    """``agree``, ``disagree`` or ``not run``, and what the cell said."""
    said = cell["message"] or ""
    if cell["status"] == "pass":
        return "agree", ""
    if cell["status"] == "skip":
        return "not run", said.removeprefix("not run: ")
    return "disagree", f"{cell['layer']}: {said}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", help="only these op types (comma-separated)")
    parser.add_argument("--work", type=Path, help="keep the package and the cache here")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    references = [r for r in _references.REFERENCES if not args.k or r.op_type in args.k.split(",")]
    if not _references.available(references):
        sys.exit("the public mirrors of hicann/ops-nn and ops-math are not on this machine")
    with tempfile.TemporaryDirectory(prefix="kernel_sample") as tmp:
        work = args.work or Path(tmp)
        package = _references.scaffold(references, work)
        environ = {**os.environ, "OPSDK_CACHE_DIR": str(work / "cache")}
        prebuild = "from opsdk.cann import kernel, tiling; from opsdk.cann.infer.build import "
        prebuild += "_toolkit; kernel.toolkit(); _toolkit(tiling.TILING)"
        _, toolkit, _ = timed([sys.executable, "-c", prebuild], environ)
        runs = {}
        for phase in ("cold", "cached"):
            report = work / f"{phase}.json"
            argv = [sys.executable, "-m", "opsdk", "check", str(package), *CHECK]
            wall, cpu, done = timed([*argv, "--json", str(report)], environ)
            if not report.is_file():
                sys.exit(f"opsdk check ({phase}) wrote no report:\n{done.stderr[-3000:]}")
            cells = json.loads(report.read_text())["results"]
            runs[phase] = {"wall": wall, "cpu": cpu, "cells": {c["op"]: c for c in cells}}
    rows = []
    for reference in references:
        op = f"sample::{reference.name}"
        cold, cached = (runs[p]["cells"].get(op) for p in ("cold", "cached"))
        said = verdict(cached) if cached else ("not run", "not made by opsdk new")
        rows.append(
            {
                "op": reference.op_type,
                "repo": reference.repo,
                "verdict": said[0],
                "why": said[1],
                "cases": len(reference.cases),
                "cold s": round(cold["seconds"], 2) if cold else None,
                "cached s": round(cached["seconds"], 2) if cached else None,
            }
        )
    print(f"precompiled stand-ins: {toolkit:.1f} s CPU (once per machine and opsdk version)")
    for phase, run in runs.items():
        print(f"opsdk check, {phase}: {run['wall']:.1f} s wall, {run['cpu']:.1f} s CPU")
    print(f"\n{'op':24s} {'repo':9s} {'verdict':9s} cases  cold s  cached s")
    for row in rows:
        cold = "-" if row["cold s"] is None else f"{row['cold s']:.2f}"
        cached = "-" if row["cached s"] is None else f"{row['cached s']:.2f}"
        print(
            f"{row['op']:24s} {row['repo']:9s} {row['verdict']:9s} {row['cases']:5d} "
            f"{cold:>7s} {cached:>9s}  {row['why'][:150]}"
        )
    ran = [r for r in rows if r["verdict"] != "not run"]
    agree = sum(r["verdict"] == "agree" for r in ran)
    print(f"\n{len(ran)} of {len(rows)} run; {agree} of {len(ran)} agree", end="")
    print(f" ({100 * agree / len(ran):.0f} %)" if ran else "")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
