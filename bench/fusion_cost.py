"""What the fusion check costs against the npugraph_ex column of the same op (issue 32).

One `opsdk check --no-cache --backend npugraph_ex,fusion` of an add + RMSNorm op with its
fusion pattern (bench/_ops.py), both columns in one process, every shape mode: the
seconds of each column's cells as the JSON report records them, and their ratio. The
first cell of the run pays for importing TorchAir and npugraph_ex: ``--order`` says which
column runs first (the other way round is printed too with ``--both``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _ops import generate_add_rms_norm


def measure(pkg: Path, order: str, work: Path) -> dict[str, float]:
    """Seconds per column of one `opsdk check` running the columns in ``order``; under
    ``COLUMN warm`` the same without the run's first cell (which imports TorchAir and
    npugraph_ex for both)."""
    report = work / f"report-{order.replace(',', '-')}.json"
    argv = [sys.executable, "-m", "opsdk", "check", str(pkg), "--no-cache", "--backend", order]
    done = subprocess.run([*argv, "--json", str(report)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"opsdk check failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    seconds: dict[str, float] = {}
    for i, result in enumerate(json.loads(report.read_text())["results"]):
        for key in (result["backend"], f"{result['backend']} warm") if i else (result["backend"],):
            seconds[key] = seconds.get(key, 0.0) + result["seconds"]
    return seconds


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--both", action="store_true", help="also run fusion first")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pkg = generate_add_rms_norm(work, "bench_add_rms_norm", "opsdk_bench_fusion")
        orders = ["npugraph_ex,fusion", *(["fusion,npugraph_ex"] if args.both else [])]
        ratios = {}
        for order in orders:
            seconds = measure(pkg, order, work)
            ratio = seconds["fusion"] / seconds["npugraph_ex"]
            warm = seconds["fusion warm"] / seconds["npugraph_ex warm"]
            print(
                f"{order}: npugraph_ex {seconds['npugraph_ex']:.2f} s, "
                f"fusion {seconds['fusion']:.2f} s, fusion/npugraph_ex {ratio:.2f}; "
                f"without the run's first cell (the imports): {warm:.2f}"
            )
            ratios[order] = ratio
    return ratios


if __name__ == "__main__":
    main()
