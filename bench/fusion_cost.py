"""What the fusion check costs against the npugraph_ex column of the same op (issue 32).

One `opsdk check --no-cache --backend npugraph_ex,fusion` of two add + RMSNorm ops with
their fusion patterns (bench/_ops.py), both columns in one process, every shape mode: the
seconds of each column's cells as the JSON report records them, and their ratios:

- ``steady``: over every cell of the second op, the cost per op of a library's run: the
  first op's cells have paid what a process pays once (importing TorchAir, npugraph_ex
  and the pattern matcher, the first symbolic-shape compile), for both columns alike;
- ``run`` and ``warm``: the first op's, over all its cells and over its shape modes after
  the first (whose first cell pays the imports); ``warm`` still holds the process's first
  dynamic-shape compile, paid by whichever column runs first;
- per shape mode, the second op's.

``--both`` also runs fusion first; ``--rounds`` repeats the runs (the machine is shared:
the median ratios are printed too).
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

NAMESPACE = "opsdk_bench_fusion"
# The first op pays what the process pays once; the same ops, scaled by gamma first (its
# pattern is another, and matches neither the other's graph nor it theirs).
OPS = ("bench_add_rms_norm_first", "bench_add_rms_norm")
GAMMA = ("before", "after")


def library(root: Path) -> str:
    """Both ops' packages under ``root`` and one importable module holding them."""
    for name, gamma in zip(OPS, GAMMA, strict=True):
        generate_add_rms_norm(root, name, NAMESPACE, gamma)
    (root / "bench_fusion_ops.py").write_text(
        '"""Both ops of the fusion bench, the first checked first."""\n\n'
        "import importlib\nimport sys\nfrom pathlib import Path\n\n"
        f"sys.path[:0] = [str(Path(__file__).parent / name) for name in {OPS!r}]\n"
        f"OPS = tuple(importlib.import_module(name).OP for name in {OPS!r})\n"
    )
    return "bench_fusion_ops"


def measure(target: str, order: str, work: Path) -> dict[tuple[str, str, str], float]:
    """Seconds per (op, column, shape mode) of one `opsdk check` running the columns in
    ``order``, in the order the cells ran."""
    report = work / f"report-{order.replace(',', '-')}.json"
    argv = [sys.executable, "-m", "opsdk", "check", target, "--no-cache", "--backend", order]
    done = subprocess.run([*argv, "--json", str(report)], capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        raise SystemExit(f"opsdk check failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    seconds: dict[tuple[str, str, str], float] = {}
    for result in json.loads(report.read_text())["results"]:
        key = (result["op"].split("::")[-1], result["column"], result["shapes"])
        seconds[key] = seconds.get(key, 0.0) + result["seconds"]
    return seconds


def ratios(seconds: dict[tuple[str, str, str], float]) -> dict[str, float]:
    """fusion / npugraph_ex: ``steady`` (the second op), per shape mode (the second op's),
    and the first op's ``run`` and ``warm`` (its shape modes but the run's first)."""
    first_mode = next(iter(seconds))[2]
    modes = sorted({mode for _, _, mode in seconds})

    def ratio(op: str, among) -> float:
        def total(column: str) -> float:
            cells = seconds.items()
            return sum(s for (o, c, m), s in cells if (o, c) == (op, column) and m in among)

        return round(total("fusion") / total("npugraph_ex"), 2)

    first, steady = OPS
    return {
        "steady": ratio(steady, modes),
        **{m: ratio(steady, [m]) for m in modes},
        "run": ratio(first, modes),
        "warm": ratio(first, [m for m in modes if m != first_mode]),
    }


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--both", action="store_true", help="also run fusion first")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each order")
    args = parser.parse_args(argv)
    measured: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        target = library(work)
        orders = ["npugraph_ex,fusion", *(["fusion,npugraph_ex"] if args.both else [])]
        for _ in range(args.rounds):
            for order in orders:
                seconds = measure(target, order, work)
                cells = ", ".join(
                    f"{c} {m} {s:.2f} s" for (o, c, m), s in seconds.items() if o == OPS[1]
                )
                got = ratios(seconds)
                measured.setdefault(order, []).append(got)
                print(f"{order}: {OPS[1]}: {cells}; fusion/npugraph_ex {got}")
    for order, rows in measured.items():
        medians = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
        print(f"{order}: median fusion/npugraph_ex over {len(rows)} run(s): {medians}")
    return measured


if __name__ == "__main__":
    main()
