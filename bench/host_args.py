"""Host arguments under npugraph_ex (issue 31): what varying them costs, and what an update costs.

(a) The npugraph_ex column on the default examples (``examples/custom_ops``), this tree
against another (``--baseline``: a tree from before issue 31, e.g. ``git archive 07eee25``
unpacked, which varies no list and changes host values on the last call only; or the
main checkout, for what a change costs): cell seconds of each, fresh processes
interleaved, and their ratio (the target: at most 1.10); beside it the processes' CPU
seconds, which other jobs on a shared machine change least.

(b) Per call, offline, for one op ``(Tensor x, *, SymInt[] lens) -> Tensor`` whose npu
kernel reads ``lens`` on the host, compiled with ``backend="npugraph_ex"``: a plain
replay (the op as ``opsdk new`` makes it, the same ``lens`` every call), a replay with
an update (the op made ``--updatable lens``, a new ``lens`` every call) and a recapture
(the plain op, a new ``lens`` every call), interleaved in one process, with the captures
each saw, and the ratios to the plain replay.

    python bench/host_args.py [--baseline /work/main] [--rounds 3] [--calls 200]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "custom_ops"
SCHEMA = "(Tensor x, *, SymInt[] lens) -> Tensor"


def column_seconds(tree: Path, example: Path, scratch: Path) -> tuple[float, float]:
    """The npugraph_ex cells' seconds of ``opsdk check`` on ``example``, run from ``tree``,
    and the process's CPU seconds (user + system: what other jobs on the machine change
    least)."""
    report = scratch / f"{example.name}-{abs(hash(str(tree)))}.json"
    env = {**os.environ, "PYTHONPATH": str(tree), "OPSDK_NO_CACHE": "1"}
    argv = [sys.executable, "-m", "opsdk", "check", str(example), "--backend", "npugraph_ex"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [*argv, "--json", str(report)], env=env, capture_output=True, text=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return sum(r["seconds"] for r in json.loads(report.read_text())["results"]), cpu


def varied_cost(baseline: Path, rounds: int) -> dict[Path, list[float]]:
    """Per tree (this one, the baseline), the npugraph_ex cell seconds and the processes'
    CPU seconds over the examples."""
    totals = {ROOT: [0.0, 0.0], baseline: [0.0, 0.0]}
    examples = [p for p in sorted(EXAMPLES.iterdir()) if (p / "pyproject.toml").exists()]
    with tempfile.TemporaryDirectory(prefix="opsdk-host-args-") as scratch:
        for _ in range(rounds):
            for tree in (ROOT, baseline):
                for example in examples:
                    cells, cpu = column_seconds(tree, example, Path(scratch))
                    totals[tree][0] += cells
                    totals[tree][1] += cpu
    return totals


def _package(out: Path, name: str, updatable: bool):
    """``opsdk new`` of the op (``--updatable lens`` or not), kernels filled in, imported."""
    from opsdk.scaffold import NewRequest, new

    options = {"updatable": ("lens",)} if updatable else {}
    path = new(NewRequest(name, schema=name + SCHEMA, out=out, **options)).path
    body = {
        "kernels": "return (x * float(sum(lens))).contiguous()",
        "fake": "return x.new_empty(x.shape)",
    }
    for module, code in body.items():
        file = path / name / f"{module}.py"
        text = re.sub(r"raise ImplementMe\(\s*__file__,[^)]*\)", code, file.read_text())
        file.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    sys.path.insert(0, str(path))
    return importlib.import_module(name).OPS[0]


def per_call(calls: int, rounds: int) -> dict[str, tuple[float, int]]:
    """Per way of calling: (microseconds a call, captures seen)."""
    import torch

    from opsdk.harness.columns.npugraph_ex import counting_graphs
    from opsdk.offline import torchair as bringup

    with tempfile.TemporaryDirectory(prefix="opsdk-host-args-ops-") as scratch:
        plain = _package(Path(scratch), "bench_plain_lens", updatable=False)
        updatable = _package(Path(scratch), "bench_updated_lens", updatable=True)
        backend = bringup.get_backend()
        ways = {
            "plain replay": (plain, False),
            "replay with update": (updatable, True),
            "recapture": (plain, True),
        }
        found = {way: [0.0, 0] for way in ways}
        for _ in range(rounds):
            for way, (op, varied) in ways.items():
                torch._dynamo.reset()
                fn = torch.compile(
                    lambda x, lens, op=op: op(x, lens=lens),
                    backend=backend,
                    fullgraph=True,
                    dynamic=True,
                )
                x = torch.ones(8, 16, device="npu")
                torch._dynamo.mark_static(x)
                fn(x, [2, 3])  # compile and first capture, not timed
                with counting_graphs() as counts:
                    start = time.perf_counter()
                    for i in range(calls):
                        fn(x, [4 + i, 5] if varied else [2, 3])
                    found[way][0] += (time.perf_counter() - start) / calls * 1e6 / rounds
                found[way][1] += counts.captures
    return {way: (us, captures) for way, (us, captures) in found.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a tree to compare the column with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    if args.baseline:
        (mine, mine_cpu), (theirs, theirs_cpu) = varied_cost(
            args.baseline.resolve(), args.rounds
        ).values()
        print(f"npugraph_ex column, examples: {mine:.2f} s here, {theirs:.2f} s baseline")
        print(f"ratio {mine / theirs:.3f} (target <= 1.10)")
        print(f"process CPU: {mine_cpu:.2f} s here, {theirs_cpu:.2f} s baseline, ratio "
              f"{mine_cpu / theirs_cpu:.3f}")  # fmt: skip
    rows = per_call(args.calls, args.rounds)
    base = rows["plain replay"][0]
    for way, (us, captures) in rows.items():
        print(f"{way:20} {us:9.1f} us/call  {us / base:6.2f}x  captures {captures}")


if __name__ == "__main__":
    main()
