"""What the pictures of failing cells' graphs add to a report, per failing cell.

A library of generated add ops (`bench/_ops.py`) whose converters feed ``x`` to both
GE inputs, so every ``ge`` cell fails (in ``ge-exec``, with its graphs compiled):

(a) in process, the time the drawer spends per failing cell (both graphs: torch's
    ``FxGraphDrawer`` and the GE drawing, each through Graphviz's ``dot`` to SVG);
(b) `opsdk check --backend ge --report r.html --no-cache` with ``--graphs failing`` (the
    default) against ``--graphs none``, a fresh process each, interleaved ``--rounds``
    times: the difference in CPU time (user + system, steadier than wall time on a
    shared machine) and in wall time, divided by the failing cells.

    python bench/graph_pictures.py [--ops 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ops import generate_library  # noqa: E402
from harness_throughput import _cpu, _env_with  # noqa: E402

BROKEN = ('inputs={"x": x, "y": y}', 'inputs={"x": x, "y": x}')  # wrong values: ge-exec


def _library(root: Path, ops: int) -> str:
    """``ops`` out-of-place add ops whose converters are broken the same way."""
    module = generate_library(root, ops, library="default")
    for converter in root.glob("bench_op_*/bench_op_*/converter.py"):
        text = converter.read_text()
        assert BROKEN[0] in text, converter
        converter.write_text(text.replace(*BROKEN))
    return module


def in_process(module: str, root: Path) -> tuple[int, float, float]:
    """(failing cells, wall and CPU seconds the drawer spent on them, ``dot`` included),
    the ``ge`` column in process."""
    from opsdk import harness
    from opsdk.harness import graph_hook
    from opsdk.report.graphs.pictures import Pictures

    sys.path.insert(0, str(root))
    package = importlib.import_module(module)
    drawer = Pictures(root / "pictures")
    spent = [0.0, 0.0]

    def timed(graphs) -> None:
        wall, cpu = time.perf_counter(), time.process_time() + _cpu()
        drawer(graphs)
        spent[0] += time.perf_counter() - wall
        spent[1] += time.process_time() + _cpu() - cpu

    with graph_hook.received_by(timed):
        results = harness.run_matrix(harness.cells(package, ["ge"]))
    return sum(r.status == "fail" for r in results), *spent


def _check(module: str, root: Path, graphs: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `opsdk check --report` process."""
    argv = [sys.executable, "-m", "opsdk", "check", module, "--backend", "ge", "--no-cache"]
    argv += ["--report", str(root / f"report-{graphs}.html"), "--graphs", graphs]
    cpu, start = _cpu(), time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=_env_with(root), cwd=root)
    if done.returncode != 1:  # every ge cell fails
        raise SystemExit(f"opsdk check --graphs {graphs} exited {done.returncode}: {done.stderr}")
    return time.perf_counter() - start, _cpu() - cpu


def by_process(module: str, root: Path, rounds: int) -> dict[str, float]:
    """Seconds per round of each kind of run, interleaved."""
    spent = {"failing wall": 0.0, "failing cpu": 0.0, "none wall": 0.0, "none cpu": 0.0}
    for _ in range(rounds):
        for graphs in ("none", "failing"):
            wall, cpu = _check(module, root, graphs)
            spent[f"{graphs} wall"] += wall / rounds
            spent[f"{graphs} cpu"] += cpu / rounds
    return spent


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=4, help="generated ops (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="process pairs (default 3)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="opsdk-graph-pictures-") as scratch:
        root = Path(scratch)
        module = _library(root, args.ops)
        spent = by_process(module, root, args.rounds)
        failed, wall, cpu = in_process(module, root)
    row = {
        "failing cells": failed,
        "drawing wall s/failing cell": wall / failed,
        "drawing cpu s/failing cell": cpu / failed,
        "report cpu s/failing cell": (spent["failing cpu"] - spent["none cpu"]) / failed,
        "report wall s/failing cell": (spent["failing wall"] - spent["none wall"]) / failed,
        **{f"{k} s/run": v for k, v in spent.items()},
    }
    print("load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    for key, value in row.items():
        print(f"{key:40} {value:8.3f}" if isinstance(value, float) else f"{key:40} {value:8d}")
    return row


if __name__ == "__main__":
    main()
