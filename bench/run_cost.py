"""What a run costs, this tree against another (issue 37: watching a run, journaling its
cells and checking its sources after each must not cost more than 10 %).

For each tree (this one, ``--baseline``: e.g. ``git archive b49c098`` unpacked), fresh
processes interleaved, ``python -m opsdk`` as users run it: ``opsdk check`` of every
example (``examples/custom_ops``) cold (``--no-cache``) and cached (a second run over a
filled cell cache), and with ``--audit`` ``opsdk audit torch_npu`` cold (an empty cell
cache in a fresh folder) and cached. Per command: wall seconds, CPU seconds (user +
system of every process it started) and peak memory (the largest process's resident
set), the medians of ``--rounds``, and the ratio of this tree's to the baseline's.

    python bench/run_cost.py --baseline /tmp/base [--rounds 3] [--audit]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "custom_ops"
# Runs a command in a process of its own and prints what it and its children cost.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[2:], cwd=sys.argv[1], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": use.ru_utime + use.ru_stime,
                  "peak_mb": use.ru_maxrss / 1024}))
"""


def measured(tree: Path, cwd: Path, args: list[str], cache: bool) -> dict:
    """One fresh run of `python -m opsdk ARGS` from ``tree``'s opsdk."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("OPSDK_NO_CACHE", None)
    if not cache:
        env["OPSDK_NO_CACHE"] = "1"
    argv = [sys.executable, "-c", _MEASURE, str(cwd), sys.executable, "-m", "opsdk", *args]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _examples() -> list[Path]:
    return [p for p in sorted(EXAMPLES.iterdir()) if (p / "pyproject.toml").exists()]


def runs(tree: Path, scratch: Path, audit: bool) -> dict[str, dict]:
    """Each command's cost for ``tree``, the examples' summed."""
    found: dict[str, dict] = {}

    def add(name: str, cost: dict) -> None:
        total = found.setdefault(name, {"wall": 0.0, "cpu": 0.0, "peak_mb": 0.0})
        total["wall"] += cost["wall"]
        total["cpu"] += cost["cpu"]
        total["peak_mb"] = max(total["peak_mb"], cost["peak_mb"])

    for example in _examples():
        copy = scratch / f"{example.name}-{abs(hash(str(tree)))}"
        subprocess.run(["cp", "-r", str(example), str(copy)], check=True)
        check = ["check", str(copy), "--json", str(copy / "r.json")]
        add("check cold", measured(tree, scratch, check, cache=False))
        measured(tree, scratch, check, cache=True)  # fills the cell cache
        add("check cached", measured(tree, scratch, check, cache=True))
        subprocess.run(["rm", "-rf", str(copy)], check=True)
    if audit:
        folder = scratch / f"audit-{abs(hash(str(tree)))}"
        folder.mkdir()
        command = ["audit", "torch_npu", "--json", str(folder / "r.json")]
        add("audit cold", measured(tree, folder, command, cache=True))
        add("audit cached", measured(tree, folder, command, cache=True))
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the tree to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--audit", action="store_true", help="also opsdk audit torch_npu")
    args = parser.parse_args()
    trees = {"here": ROOT, "baseline": args.baseline.resolve()}
    rounds: dict[str, list[dict]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory(prefix="opsdk-run-cost-") as scratch:
        for _ in range(args.rounds):
            for name, tree in trees.items():
                rounds[name].append(runs(tree, Path(scratch), args.audit))
    print("| command | measure | here | baseline | ratio |\n| --- | --- | --- | --- | --- |")
    for command in rounds["here"][0]:
        for measure in ("wall", "cpu", "peak_mb"):
            here, base = (
                statistics.median(r[command][measure] for r in rounds[name]) for name in trees
            )
            print(f"| {command} | {measure} | {here:.2f} | {base:.2f} | {here / base:.3f} |")


if __name__ == "__main__":
    main()
