"""What the fusion check costs against the npugraph_ex column of the same op (issue 32).

One `opsdk check --no-cache --backend npugraph_ex,fusion` of an add + RMSNorm op with its
fusion pattern (bench/_ops.py), both columns in one process, every shape mode: the
seconds of each column's cells as the JSON report records them, and their ratio, over
the whole run and *warm*: over the shape modes after the run's first (whose first cell
pays for importing TorchAir, npugraph_ex and the pattern matcher for both columns), the
same modes for both. ``--both`` also runs fusion first; ``--rounds`` repeats the runs (the
machine is shared: the median ratio is printed too).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _ops import generate_add_rms_norm


def measure(pkg: Path, order: str, work: Path) -> dict[tuple[str, str], float]:
    """Seconds per (column, shape mode) of one `opsdk check` running the columns in
    ``order``; the first key is the run's first cell's."""
    report = work / f"report-{order.replace(',', '-')}.json"
    argv = [sys.executable, "-m", "opsdk", "check", str(pkg), "--no-cache", "--backend", order]
    done = subprocess.run([*argv, "--json", str(report)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"opsdk check failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    seconds: dict[tuple[str, str], float] = {}
    for result in json.loads(report.read_text())["results"]:
        key = (result["backend"], result["shapes"])
        seconds[key] = seconds.get(key, 0.0) + result["seconds"]
    return seconds


def ratios(seconds: dict[tuple[str, str], float]) -> dict[str, float]:
    """fusion / npugraph_ex over every cell (``run``), per shape mode, and ``warm``: over
    the shape modes but the run's first."""
    first_mode = next(iter(seconds))[1]
    modes = sorted({mode for _, mode in seconds})

    def total(column: str, among) -> float:
        return sum(s for (c, mode), s in seconds.items() if c == column and mode in among)

    def ratio(among) -> float:
        return round(total("fusion", among) / total("npugraph_ex", among), 2)

    warm = [m for m in modes if m != first_mode]
    return {"run": ratio(modes), "warm": ratio(warm), **{m: ratio([m]) for m in modes}}


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--both", action="store_true", help="also run fusion first")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each order")
    args = parser.parse_args(argv)
    measured: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pkg = generate_add_rms_norm(work, "bench_add_rms_norm", "opsdk_bench_fusion")
        orders = ["npugraph_ex,fusion", *(["fusion,npugraph_ex"] if args.both else [])]
        for _ in range(args.rounds):
            for order in orders:
                seconds = measure(pkg, order, work)
                cells = ", ".join(f"{c} {m} {s:.2f} s" for (c, m), s in seconds.items())
                got = ratios(seconds)
                measured.setdefault(order, []).append(got)
                print(f"{order}: {cells}; fusion/npugraph_ex {got}")
    for order, rows in measured.items():
        medians = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
        print(f"{order}: median fusion/npugraph_ex over {len(rows)} run(s): {medians}")
    return measured


if __name__ == "__main__":
    main()
