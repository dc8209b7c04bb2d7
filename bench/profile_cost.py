"""Option profile cost: what each profile adds to `opsdk check`, per op.

One `opsdk check --options all` process on a library of generated add ops
(alternately in-place and not, `bench/_ops.py`), the `ge` and `npugraph_ex` columns
in every shape mode. From its JSON report: per column variant (``ge``,
``ge+frozen_parameter``, ...), the cells run and skipped, and the seconds its cells
took per op; the plain columns are the baseline the profiles add to.

    python bench/profile_cost.py [--ops 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ops import generate_library  # noqa: E402


def measure(ops: int) -> dict[str, tuple[int, int, float]]:
    """Per column variant: (cells that ran, cells skipped, cell seconds per op)."""
    with tempfile.TemporaryDirectory(prefix="opsdk-profile-cost-") as scratch:
        root = Path(scratch)
        module = generate_library(root, ops)
        report = root / "report.json"
        env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        argv = [sys.executable, "-m", "opsdk", "check", module, "--backend", "ge,npugraph_ex"]
        argv += ["--options", "all", "--json", str(report)]
        subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, check=False)
        results = json.loads(report.read_text())["results"]
    rows: dict[str, list] = defaultdict(lambda: [0, 0, 0.0])
    for r in results:
        variant = f"{r['column']}+{r['profile']}" if r["profile"] else r["column"]
        row = rows[variant]
        row[1 if r["status"] == "skip" else 0] += 1
        row[2] += r["seconds"] / ops
    return {k: (ran, skipped, seconds) for k, (ran, skipped, seconds) in rows.items()}


def main(argv: list[str] | None = None) -> dict[str, tuple[int, int, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2, help="generated ops (default 2)")
    args = parser.parse_args(argv)
    rows = measure(args.ops)
    print(f"{'column variant':36} {'ran':>4} {'skip':>4} {'s/op':>7}")
    for variant, (ran, skipped, seconds) in rows.items():
        print(f"{variant:36} {ran:4d} {skipped:4d} {seconds:7.2f}")
    return rows


if __name__ == "__main__":
    main()
