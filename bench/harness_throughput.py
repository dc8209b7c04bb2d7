"""Harness throughput: the conformance matrix on libraries of generated ops.

Side by side, in one run, each as a fresh `opsdk check --no-cache` process (what users
run, every cell run):
  (a) the aot_eager column alone,
  (b) the full matrix (every backend x static/dynamic/mark_static) in one process,
  (c) the naive way: one process per backend, one after the other.
Cold start is the time from starting the command to its first cell result. The
full matrix includes the default usage contexts (``view`` and ``buffer`` for the
in-place ops). With ``--profile`` the aot_eager column alone and the full matrix also
run under cProfile (CPU time), and the time is split by where it goes (Dynamo, AOT
Autograd, TorchAir, opsdk's stand-ins, ...), side by side: the difference is what the
other columns cost. With ``--contexts`` it measures, in one process, the CPU seconds
per op of the library (half its ops write an input) of the compiled columns' cells of
the op alone, then of each usage context's cells. ``--incremental N`` measures the
cell cache on an N-op library: the full matrix once, then, after editing one op's
kernel, the full matrix again (only that op's cells run) against that op's own matrix
(``-k`` that op, ``--no-cache``).

``--library`` picks the generated ops: ``default`` (what ``opsdk new NAME`` makes,
out-of-place: the issue's "default ops"), ``mixed`` (alternately in-place and not),
or both. ``--rounds N`` repeats the aot_eager-alone / full-matrix pair N times,
interleaved, and reports the ratio of the sums. ``--phases`` runs each of the two in
a process of its own timed by phase without a profiler (imports, each column's
cells, and within them TorchAir's and npugraph_ex's own lowerings and runs), and
says how much of what the 1.5x target leaves past aot_eager the backends' own work
takes.

    python bench/harness_throughput.py [--ops 1,10,20] [--library default,mixed]
        [--rounds N] [--phases] [--profile] [--contexts] [--incremental 20]
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import pstats
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _ops import LIBRARIES, NAMESPACE, generate_library  # noqa: E402

from opsdk.axes import SHAPE_MODES  # noqa: E402
from opsdk.harness.columns import compiling, names  # noqa: E402
from opsdk.harness.variants import contexts  # noqa: E402

_RESULT_LINE = re.compile(r"\b(pass|fail|error|skip|xfail)\b")


@dataclass
class Run:
    seconds: float
    first_result: float
    cpu_seconds: float  # user + system: steadier than wall time on a shared machine


def _cpu(who: int = resource.RUSAGE_CHILDREN) -> float:
    """User + system seconds of ``who`` (the finished child processes, or this one)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _env_with(root: Path) -> dict[str, str]:
    """This environment with ``root`` (the generated library) first on PYTHONPATH."""
    return {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def run_check(module: str, root: Path, backends: list[str], *args: str) -> Run:
    """One `opsdk check` process (``--no-cache`` unless ``args`` are given): wall time,
    time until its first cell result, CPU time."""
    env = _env_with(root)
    argv = [sys.executable, "-m", "opsdk", "check", module, "--backend", ",".join(backends)]
    argv += list(args) or ["--no-cache"]
    cpu = _cpu()
    start = time.perf_counter()
    first = None
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=root) as proc:
        for line in proc.stdout:
            if first is None and _RESULT_LINE.search(line):
                first = time.perf_counter() - start
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"opsdk check {module} --backend {','.join(backends)} {args} failed")
    return Run(seconds, first or seconds, _cpu() - cpu)


def measure(count: int, root: Path, library: str = "mixed") -> dict[str, float]:
    module = generate_library(root, count, library=library)
    aot = run_check(module, root, ["aot_eager"])
    full = run_check(module, root, list(names()))
    naive = [run_check(module, root, [backend]) for backend in names()]
    return {
        "ops": count,
        "library": library,
        "cells": count * len(names()) * len(SHAPE_MODES),
        "aot_eager_s": aot.seconds,
        "full_s": full.seconds,
        "naive_s": sum(r.seconds for r in naive),
        "full/aot_eager": full.seconds / aot.seconds,
        "aot_eager_cpu_s": aot.cpu_seconds,
        "full_cpu_s": full.cpu_seconds,
        "full/aot_eager cpu": full.cpu_seconds / aot.cpu_seconds,
        "naive/full": sum(r.seconds for r in naive) / full.seconds,
        "cold_start_s": full.first_result,
    }


def rounds(count: int, root: Path, library: str, number: int) -> dict:
    """``number`` interleaved rounds of the aot_eager column alone and the full matrix on
    one library (CPU time of whole processes): on a shared machine one pair can be off by
    15%, the ratio of the sums of several is steadier."""
    module = generate_library(root, count, library=library)
    aot, full = [], []
    for _ in range(number):
        aot.append(run_check(module, root, ["aot_eager"]).cpu_seconds)
        full.append(run_check(module, root, list(names())).cpu_seconds)
    return {
        "ops": count,
        "library": library,
        "aot_eager_cpu_s": aot,
        "full_cpu_s": full,
        "full/aot_eager cpu (sums)": sum(full) / sum(aot),
    }


def context_costs(count: int, root: Path) -> dict[str, float]:
    """CPU seconds per op, in this process: the compiled columns' cells of the op alone
    (TorchAir's import and first compiles included), then the cells of each context."""
    module = generate_library(root, count)
    sys.path.insert(0, str(root))
    from opsdk import harness
    from opsdk.harness.run import target

    package = target.load(module)
    costs = {}
    for name in (contexts.NONE, *contexts.names()):
        cells = harness.cells(package, compiling(), SHAPE_MODES, contexts=[name])
        cells = [c for c in cells if (c.context or contexts.NONE) == name]
        start = time.process_time()
        results = harness.run_matrix(cells)
        costs[name] = (time.process_time() - start) / count
        assert all(r.status in ("pass", "skip") for r in results), [r.describe() for r in results]
    return costs


def incremental(count: int, root: Path) -> dict[str, float]:
    """The cell cache on a ``count``-op library: after editing the last op's kernel, the
    full matrix reruns that op's cells only; its CPU time against that op's own matrix."""
    module = generate_library(root, count)
    everything = list(names())
    first = run_check(module, root, everything, "--json", str(root / "first.json"))
    op = f"bench_op_{count - 1}"
    kernels = root / op / op / "kernels.py"
    kernels.write_text(kernels.read_text() + "# edited\n")
    rerun = run_check(module, root, everything, "--json", str(root / "rerun.json"))
    ran = [r for r in json.loads((root / "rerun.json").read_text())["results"] if not r["cached"]]
    assert {r["op"] for r in ran} == {f"{NAMESPACE}::{op}"}, ran
    own = run_check(module, root, everything, "-k", op, "--no-cache")
    return {
        "ops": count,
        "first_cpu_s": first.cpu_seconds,
        "rerun_cpu_s": rerun.cpu_seconds,
        "own_matrix_cpu_s": own.cpu_seconds,
        "rerun/own matrix cpu": rerun.cpu_seconds / own.cpu_seconds,
        "rerun/first cpu": rerun.cpu_seconds / first.cpu_seconds,
    }


# Where time goes, by the file that spends it (self time; C functions are "~").
_AREAS = [
    ("TorchAir GE (convert, passes)", "torchair/"),
    ("npugraph_ex", "npugraph_ex/"),
    ("emulated npu device", "opsdk/_runtime/npu/"),
    ("opsdk GE executor / stand-ins", "opsdk/offline/"),
    ("opsdk harness", "opsdk/harness/"),
    ("AOT Autograd", "torch/_functorch/"),
    ("Dynamo", "torch/_dynamo/"),
    ("opcheck", "torch/testing/_internal/optests"),
    ("FakeTensor", "torch/_subclasses/"),
    ("FX tracing, symbolic shapes", "torch/fx/"),
    ("FX tracing, symbolic shapes", "sympy/"),
    ("op dispatch, Python side", "torch/_ops.py"),
    ("op dispatch, Python side", "torch/_library/"),
    ("pytree", "torch/utils/_pytree"),
    ("C functions (kernels, builtins)", "~"),
]


def profile(count: int, root: Path, backends) -> tuple[dict[str, float], dict[str, float]]:
    """``backends`` on the library in this process under cProfile (CPU time): seconds by
    area (self time), and seconds per op by column (the cells' own timings, wall time,
    profiler overhead included)."""
    module = generate_library(root, count)
    sys.path.insert(0, str(root))
    from opsdk import harness
    from opsdk.harness.run import target

    cells = harness.cells(target.load(module), backends, SHAPE_MODES)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    results = harness.run_matrix(cells)
    profiler.disable()
    assert all(r.status == "pass" for r in results), [r.describe() for r in results]
    stats = pstats.Stats(profiler).stats
    totals = dict.fromkeys([a for a, _ in _AREAS] + ["other"], 0.0)
    for (filename, _, _), (_, _, self_time, _, _) in stats.items():
        area = next((a for a, marker in _AREAS if marker in filename), "other")
        totals[area] += self_time
    per_column = {b: sum(r.seconds for r in results if r.column == b) / count for b in backends}
    return totals, per_column


def _profiles(count: int) -> None:
    """The aot_eager column alone and the full matrix, each in a process of its own
    (the packages a profile imports would outlive their directory here)."""
    areas = {}
    for label, backends in (("aot_eager", ["aot_eager"]), ("full", list(names()))):
        done = subprocess.run(
            [sys.executable, __file__, "--profile-one", str(count), ",".join(backends)],
            capture_output=True,
            text=True,
            check=True,
        )
        areas[label], per_column = json.loads(done.stdout.splitlines()[-1])
    print(f"profile, {count} ops, CPU self time by area (cProfile):")
    print(f"  {'area':32} {'aot_eager':>9} {'full':>9} {'extra':>9}")
    order = sorted(areas["full"], key=lambda a: -(areas["full"][a] - areas["aot_eager"][a]))
    for area in order:
        alone, full = areas["aot_eager"][area], areas["full"][area]
        print(f"  {area:32} {alone:9.2f} {full:9.2f} {full - alone:9.2f}")
    alone, full = sum(areas["aot_eager"].values()), sum(areas["full"].values())
    print(f"  {'total':32} {alone:9.2f} {full:9.2f} {full - alone:9.2f}")
    print("seconds per op, by column (full matrix, under the profiler):")
    for backend, seconds in per_column.items():
        print(f"  {backend:32} {seconds:7.3f} s")


# The backends' own work, timed by phases() around their entry points: each compiler
# lowers one post-AOT graph, each compiled graph runs the calls (GE execution; capture and
# replay). By module, class and method, as the installed TorchAir names them.
_BACKEND_WORK = {
    "ge lowering (TorchAir)": ("torchair.npu_fx_compiler", "_NpuFxCompiler", "_get_compiled_gm"),
    "npugraph_ex lowering": ("npugraph_ex.npu_fx_compiler", "_NpuFxCompiler", "_get_compiled_gm"),
    "ge runs": ("torchair.npu_fx_compiler", "_CompiledFxGraph", "__call__"),
    "npugraph_ex runs": ("npugraph_ex.npu_fx_compiler", "_CompiledFxGraph", "__call__"),
}
_IMPORT = "TorchAir + npugraph_ex import"


def _timed(spent: dict[str, float], label: str, fn):
    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.process_time() - start

    return timed


def phases(module: str, backends: list[str]) -> dict[str, float]:
    """CPU seconds of ``backends`` on the library ``module`` in this process, by phase,
    without a profiler: the process start (Python, torch, opsdk, this script), Dynamo's
    import, TorchAir's and npugraph_ex's, each column's cells (the first compiled
    column's include each case's shared compile) and, within those, TorchAir's and
    npugraph_ex's compilers; ``total`` is the whole process."""
    from opsdk import harness
    from opsdk.harness import columns
    from opsdk.harness.run import target

    spent = {"process start": _cpu(resource.RUSAGE_SELF)}
    _timed(spent, "Dynamo import", importlib.import_module)("torch._dynamo")
    if {"ge", "npugraph_ex"} & set(backends):
        from opsdk.offline import torchair as bringup

        _timed(spent, _IMPORT, bringup.get_backend)()
        for label, (path, name, method) in _BACKEND_WORK.items():
            owner = getattr(importlib.import_module(path), name)
            setattr(owner, method, _timed(spent, label, getattr(owner, method)))
    run = columns.Column.run
    columns.Column.run = lambda column, cell, dump_dir=None: _timed(
        spent, f"cells {column.name}", run
    )(column, cell, dump_dir)
    cells = harness.cells(target.load(module), backends, SHAPE_MODES)
    results = harness.run_matrix(cells)
    assert all(r.status in ("pass", "skip") for r in results), [r.describe() for r in results]
    spent["total"] = _cpu(resource.RUSAGE_SELF)
    return spent


def by_phase(count: int, library: str) -> dict[str, dict[str, float]]:
    """The aot_eager column alone and the full matrix by phase (:func:`phases`), each a
    process of its own on one generated library, side by side; printed with what the 1.5x
    target leaves for everything past aot_eager, against the backends' own work (imports,
    lowerings, runs)."""
    spent = {}
    with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
        module = generate_library(Path(tmp), count, library=library)
        for label, backends in (("aot_eager", ["aot_eager"]), ("full", list(names()))):
            done = subprocess.run(
                [sys.executable, __file__, "--phases-one", module, ",".join(backends)],
                capture_output=True,
                text=True,
                check=True,
                env=_env_with(Path(tmp)),
                cwd=tmp,
            )
            spent[label] = json.loads(done.stdout.splitlines()[-1])
    alone, full = spent["aot_eager"], spent["full"]
    print(f"phases, {count} {library} ops, CPU seconds (a process each, no profiler):")
    print(f"  {'phase':40} {'aot_eager':>9} {'full':>9}")
    order = ["process start", "Dynamo import", _IMPORT, *(f"cells {c}" for c in names())]
    for run in (alone, full):
        run["rest (harness between cells)"] = run["total"] - sum(run.get(p, 0) for p in order)
    for phase in [*order, "rest (harness between cells)", "total", *_BACKEND_WORK]:
        label = f"  in the cells: {phase}" if phase in _BACKEND_WORK else phase
        print(f"  {label:40} {alone.get(phase, 0):9.2f} {full.get(phase, 0):9.2f}")
    budget = alone["total"] / 2
    own = sum(full.get(phase, 0) for phase in (_IMPORT, *_BACKEND_WORK))
    print(
        f"full / aot_eager {full['total'] / alone['total']:.2f}x; past aot_eager the 1.5x "
        f"target leaves {budget:.2f} s, the full matrix spends {full['total'] - alone['total']:.2f}"
        f" s, of which TorchAir's and npugraph_ex's own work (import, lowerings, runs) "
        f"{own:.2f} s ({own / budget:.0%} of what the target leaves)"
    )
    return spent


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="1,10,20", help="op counts, comma-separated")
    parser.add_argument("--profile", action="store_true", help="also profile the largest")
    parser.add_argument(
        "--contexts", action="store_true", help="also measure each usage context's cost"
    )
    parser.add_argument("--incremental", type=int, metavar="N", help="the cell cache, N ops")
    parser.add_argument(
        "--library",
        default="default",
        help=f"which generated ops, comma-separated: {', '.join(LIBRARIES)} (see bench/_ops.py)",
    )
    parser.add_argument(
        "--phases", action="store_true", help="also time the largest library's run by phase"
    )
    parser.add_argument(
        "--rounds", type=int, metavar="N", help="also N interleaved rounds of the largest library"
    )
    parser.add_argument("--profile-one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--phases-one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phases_one:  # one run by phase, in the process by_phase started
        print(json.dumps(phases(args.phases_one[0], args.phases_one[1].split(","))))
        return []
    if args.profile_one:  # one profile, in the process _profiles started
        count, backends = int(args.profile_one[0]), args.profile_one[1].split(",")
        with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
            print(json.dumps(profile(count, Path(tmp), backends)))
        return []
    rows = []
    libraries = args.library.split(",")
    counts = [int(n) for n in args.ops.split(",")]
    largest = max(counts)
    for library in libraries:
        for count in counts:
            with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
                rows.append(measure(count, Path(tmp), library))
            print(rows[-1], flush=True)
    if args.contexts:
        with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
            costs = context_costs(largest, Path(tmp))
        print(f"compiled columns, {largest} ops (CPU seconds per op), alone and per context:")
        for context, seconds in costs.items():
            print(f"  {context:32} {seconds:7.2f} s")
    if args.incremental:
        with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
            rows.append(incremental(args.incremental, Path(tmp)))
        print(rows[-1], flush=True)
    if args.profile:
        _profiles(largest)
    if args.rounds:
        for library in libraries:
            with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
                rows.append(rounds(largest, Path(tmp), library, args.rounds))
            print(rows[-1], flush=True)
    if args.phases:
        for library in libraries:
            by_phase(largest, library)
    return rows


if __name__ == "__main__":
    main()
