"""Every benchmark in one run, then the ratios the targets are about, as one table.

    python bench/run_all.py [--quick]

``--quick`` uses fewer ops and calls: a smoke run of the benchmarks, not numbers
to quote.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
import device_cost  # noqa: E402
import harness_throughput  # noqa: E402
import host_overhead  # noqa: E402


def _cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor() or "unknown CPU"
    return next((line.split(":", 1)[1].strip() for line in lines if "model name" in line), "?")


def _machine() -> str:
    """What the numbers were measured on; the load average says whether others were busy."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()} {_cpu_model()}, "
        f"{os.cpu_count()} cores, load average {load}, Python {platform.python_version()}, "
        f"torch {torch.__version__}"
    )


def _table(rows: list[tuple[str, float, str]]) -> str:
    lines = [f"{'ratio':52} {'measured':>9}  target", "-" * 76]
    lines += [f"{name:52} {value:9.2f}  {target}" for name, value, target in rows]
    return "\n".join(lines)


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 and 2 ops, few calls")
    quick = parser.parse_args(argv).quick
    print(_machine(), flush=True)
    throughput = harness_throughput.main(
        ["--ops", "1,2", "--incremental", "2"]
        if quick
        else ["--ops", "1,10,20", "--incremental", "20"]
    )
    calls = host_overhead.main(["--number", "500" if quick else "20000"])
    aten = device_cost.main(["--number", "200" if quick else "5000"])
    rows = []
    for row in throughput:
        n = row["ops"]
        if "rerun/own matrix cpu" in row:  # the cell cache (issue 16)
            rows.append(
                (
                    f"rerun after an edit / that op's matrix, CPU, {n} op(s)",
                    row["rerun/own matrix cpu"],
                    "<= 1.2",
                )
            )
            continue
        target = {10: "<= 1.5", 20: "<= 2 (amortized over 20 ops)"}.get(n, "")
        ops = f"{n} {row['library']} op(s)"
        rows.append((f"full matrix / aot_eager alone, {ops}", row["full/aot_eager"], target))
        rows.append((f"  the same in CPU time, {ops}", row["full/aot_eager cpu"], target))
        rows.append((f"one process per backend / full matrix, {ops}", row["naive/full"], ""))
        rows.append((f"cold start to first result (s), {ops}", row["cold_start_s"], ""))
    # The cpp target is its fast entry point, what a user calls for speed; its OpOverload,
    # like every op's, cannot go under the floor.
    targets = {
        "cpp entry": "<= 1.5",
        "cpp": "",
        "library": "<= 3",
        "custom_op": "as close as its API allows",
    }
    floor = calls["aten.add.Tensor/torch.add cpu"]
    rows.append(("torch.ops.aten.add.Tensor / torch.add, CPU (floor)", floor, ""))
    for name, target in targets.items():
        rows.append((f"{name} / torch.add per call, CPU", calls[f"{name}/torch.add cpu"], target))
    for name in targets:
        rows.append((f"{name} per call, npu / CPU", calls[f"{name} npu/cpu"], ""))
    for name, (cpu, npu) in aten.items():
        rows.append((f"aten {name}, emulated npu / CPU", npu / cpu, ""))
    table = _table(rows)
    print(table)
    return table


if __name__ == "__main__":
    main()
