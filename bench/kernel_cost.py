"""What running an AscendC op's own tiling and kernel costs (issue 38: "first run <= 30 s
per op (compile), cached <= 2 s per op for 20 cases").

For production RmsNorm (hicann/ops-nn, float16), experimental AddV2 (ops-math), Gelu
and Mish (ops-nn), float32, extracted from the bare mirrors, and AddV2 at unaligned sizes
(``AddV2-tail``: its known defect, a finding per case): each op's cases go through
the ``ascendc`` column's engine (:class:`~opsdk.cann.kernel.op.AscendcOp`: the TilingFunc
for the case, the kernel built for its dtypes and key once a process, launched; the
outputs compared with torch), in a fresh process each:

- ``cold``: an empty cache (``OPSDK_CACHE_DIR``), one case: the tiling's and the kernel's
  compile, the workers' start, the first launch. The precompiled stand-in headers are
  built first and reported apart (once per machine and version of opsdk).
- ``cached``: the libraries built, 20 cases (shapes from small to a few hundred KB), the
  workers started as a new ``opsdk check`` process starts them.

Each phase's wall and CPU seconds (this process's threads and every process it started:
g++ and the workers, counted when they end); the machine is shared, CPU is the honest
figure.

With ``--baseline TREE`` (another checkout of opsdk, e.g. ``git archive`` of main,
unpacked) each phase runs with both, one after the other, and the verdicts (findings,
wrong outputs) are compared: a cost change must leave them as they were.

    python bench/kernel_cost.py [--ops RmsNorm,AddV2] [--cases 20] [--baseline TREE] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from opsdk._runtime import types
from opsdk.cann import infer, kernel, tiling
from opsdk.cann.infer.build import _toolkit
from opsdk.cann.kernel import sources
from opsdk.cann.kernel.op import AscendcOp

MIRRORS = Path("/work/.mirror")


@dataclass(frozen=True)
class Op:
    """An op of the bench: where it is (repository, project folder, extra folders its
    sources include), and its cases: ``case(i)`` gives the inputs (IR order), the
    attrs (IR order) and the expected outputs (IR order), all torch."""

    op_type: str
    repo: str
    folder: str
    case: object
    shared: tuple[str, ...] = ()
    tolerance: float = 1e-5
    name: str = ""  # the bench's name of it (default: the op type)


def _rms(x, gamma, eps=1e-6):
    rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    return (x.float() * rstd * gamma.float()).to(x.dtype), rstd


_ROWS = [1, 3, 7, 16, 48, 50, 96, 100, 5, 2, 64, 33, 40, 8, 96, 20, 12, 4, 1, 80]
_COLS = [64, 33, 130, 512, 1024, 4000, 256, 96, 4073, 12000, 128, 1000, 64, 2048, 640, 300, 8,
         3000, 16, 200]  # fmt: skip
_SIZES = [1024, 2048, 384, 4096, 1000, 2900, 8192, 16384, 49152, 65536, 1003, 3000, 5000,
          12288, 20000, 1536, 7000, 96, 32768, 100000]  # fmt: skip


def _rms_norm(i):
    rows, cols = _ROWS[i % 20], _COLS[i % 20]
    x, gamma = torch.randn(rows, cols, dtype=torch.float16), torch.randn(cols, dtype=torch.float16)
    y, rstd = _rms(x, gamma)
    return [x, gamma], (1e-6,), [y, rstd]


def _add_v2(i, aligned=True):
    n = _SIZES[i % 20] // 8 * 8 if aligned else _SIZES[i % 20] // 8 * 8 + 1 + i % 7
    x, y = torch.randn(n), torch.randn(n)
    return [x, y], (), [x + y]


def _add_v2_tail(i):
    """Unaligned sizes: its known defect, a finding on every case (the verdicts a change
    of cost must keep)."""
    return _add_v2(i, aligned=False)


def _gelu(i):
    n = _SIZES[i % 20] // 8 * 8
    x = torch.randn(n)
    return [x], (), [x / (1 + torch.exp(-1.595769122 * (x + 0.0455399241 * x**3)))]


def _mish(i):
    n = _SIZES[i % 20] // 8 * 8
    x = torch.randn(n)
    return [x], (), [x * torch.tanh(torch.nn.functional.softplus(x))]


OPS = {
    op.name or op.op_type: op
    for op in (
        Op("RmsNorm", "ops-nn", "norm/rms_norm", _rms_norm, ("common",), 2e-3),
        Op("AddV2", "ops-math", "experimental/math/add_v2", _add_v2),
        Op("AddV2", "ops-math", "experimental/math/add_v2", _add_v2_tail, name="AddV2-tail"),
        Op("Gelu", "ops-nn", "experimental/activation/gelu", _gelu),
        Op("Mish", "ops-nn", "experimental/activation/mish", _mish, (), 1e-4),
    )
}


def cpu() -> float:
    """CPU seconds of this process's threads and of the processes it started that ended."""
    me, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def extract(op: Op, into: Path) -> Path:
    """The op's repository folders, from its bare mirror (the repository's root)."""
    root = into / op.repo
    if not (root / op.folder).is_dir():
        root.mkdir(parents=True, exist_ok=True)
        git = MIRRORS / f"hicann+{op.repo}" / "repo"
        archive = subprocess.run(
            ["git", f"--git-dir={git}", "archive", "HEAD", "--", op.folder, *op.shared],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root / op.folder


def _definition(op: Op, project: Path):
    """``op``'s IR from its OpDef in the project (the engine builds per its chips)."""
    found = sources.definition(project, op.op_type)
    if found is None:
        raise SystemExit(f"no OpDef of {op.op_type} under {project / 'op_host'}")
    return dataclasses.replace(found.ir, chips=found.chips or found.ir.chips)


def run_cases(op: Op, project: Path, cases: range) -> dict:
    """``cases`` of ``op`` through the ``ascendc`` column's engine (its tiling per case,
    the kernel built once for the case's dtypes and key, launched); ``launch`` seconds
    hold the build lookup and the launch. The workers closed after."""
    engine = AscendcOp(_definition(op, project), sources.find(op.op_type, project))
    findings, wrong, launched, seconds = [], [], 0, {"tiling": 0.0, "launch": 0.0}
    try:
        for i in cases:
            torch.manual_seed(i)  # the same cases in every process
            inputs, attrs, expected = op.case(i)
            label = f"{op.op_type} case {i}"

            def node(t):
                return infer.Given(types.dtype(str(t.dtype)).value, tuple(t.shape))

            case = tiling.Case(
                tuple((node(t),) for t in inputs), tuple(map(node, expected)), attrs, label=label
            )
            start = time.perf_counter()
            tiled = engine.tile(case)
            seconds["tiling"] += time.perf_counter() - start
            if not tiled.ok:
                findings.append(f"tiling: {'; '.join(map(str, tiled.findings)) or tiled.status}")
                continue
            data = {
                n: t.numpy().tobytes()
                for n, t in zip(engine.ir.ir_input_names, inputs, strict=True)
            }
            start = time.perf_counter()
            ran = engine.launch(case, tiled, data)
            seconds["launch"] += time.perf_counter() - start
            launched += 1
            findings += map(str, ran.launch.findings)
            outputs = dict(zip((o.name for o in engine.ir.outputs), expected, strict=True))
            by_name = {n: p for p, n in ran.params.items()}
            for name, want in outputs.items():
                got = ran.launch.outputs.get(by_name[name], b"")
                got = torch.frombuffer(bytearray(got), dtype=want.dtype)
                try:
                    torch.testing.assert_close(
                        got.reshape(want.shape), want, rtol=op.tolerance, atol=op.tolerance
                    )
                except (AssertionError, RuntimeError) as err:
                    wrong.append(f"{label} {name}: {str(err).splitlines()[0]}")
    finally:
        engine.close()
    seconds = {k: round(v, 2) for k, v in seconds.items()}
    return {"launched": launched, "findings": findings, "wrong": wrong, "seconds": seconds}


def measure(op_type: str, phase: str, cases: int, work: Path) -> dict:
    """One phase of one op, in this process (run by :func:`main` in a fresh one)."""
    op = OPS[op_type]
    project = extract(op, work / "src")
    _, _, expected = op.case(0)  # torch's first calls, which a check pays once, not per op
    torch.testing.assert_close(expected[0], expected[0])
    toolkit, used = 0.0, cpu()
    if phase == "cold":  # the precompiled stand-ins: once per machine and version of opsdk
        kernel.toolkit()
        _toolkit(tiling.TILING)
        toolkit = cpu() - used
    wall, used = time.perf_counter(), cpu()
    done = run_cases(op, project, range(1 if phase == "cold" else cases))
    return {
        "op": op_type,
        "phase": phase,
        "wall": round(time.perf_counter() - wall, 2),
        "cpu": round(cpu() - used, 2),
        "toolkit": round(toolkit, 2),
        **done,
    }


def child(op_type: str, phase: str, cases: int, work: Path, tree: Path | None) -> dict:
    """:func:`measure` in a fresh process, with opsdk from ``tree`` (None: this one's)."""
    label = tree.name if tree else "here"
    environ = {**os.environ, "OPSDK_CACHE_DIR": str(work / f"cache-{label}")}
    if tree:
        environ["PYTHONPATH"] = str(tree)  # before the installed opsdk
    done = subprocess.run(
        [sys.executable, __file__, "--phase", f"{op_type}:{phase}:{work}", "--cases", str(cases)],
        capture_output=True, text=True, env=environ,
    )  # fmt: skip
    if done.returncode:
        sys.exit(f"{op_type} {phase} ({label}): failed\n{done.stderr[-3000:]}")
    return {"tree": label, **json.loads(done.stdout.splitlines()[-1])}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--baseline", type=Path, help="another opsdk tree, measured alongside")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--phase", help=argparse.SUPPRESS)  # the child's: OP:PHASE:WORK
    args = parser.parse_args(argv)
    if args.phase:
        op_type, phase, work = args.phase.split(":", 2)
        print(json.dumps(measure(op_type, phase, args.cases, Path(work))))
        return 0
    trees = [None, *([args.baseline.resolve()] if args.baseline else [])]
    rows = []
    print("op          phase  cases  tree       wall s   CPU s  (tiling s, launches s wall)")
    with tempfile.TemporaryDirectory(prefix="kernel_cost") as tmp:
        for op_type in args.ops.split(","):
            for phase in ("cold", "cached"):
                measured = [child(op_type, phase, args.cases, Path(tmp), t) for t in trees]
                for row in measured:
                    toolkit = f"  + stand-ins {row['toolkit']} s CPU" if row["toolkit"] else ""
                    print(
                        f"{op_type:11s} {phase:6s} {row['launched']:5d}  {row['tree']:9s} "
                        f"{row['wall']:7.2f} {row['cpu']:7.2f}  ({row['seconds']['tiling']}, "
                        f"{row['seconds']['launch']}){toolkit}"
                    )
                verdicts = {(tuple(r["findings"]), tuple(r["wrong"])) for r in measured}
                for findings, wrong in verdicts:
                    print(f"    {len(findings)} findings, {len(wrong)} wrong outputs")
                    for said in [*findings[:3], *wrong[:3]]:
                        print(f"      {said[:160]}")
                if len(verdicts) > 1:
                    print("    THE TREES DISAGREE: a cost change must not change a verdict")
                rows += measured
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
