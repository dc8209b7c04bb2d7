"""Host overhead per call of generated ops, against ``torch.add`` on the same tensors.

Each registration style (custom_op, library, cpp) is scaffolded as an out-of-place
add and called through its ``OpOverload`` on small tensors, on CPU (its CPU
reference kernel: pure dispatch cost) and on the emulated npu device (its npu
kernel); so is the cpp style's fast entry point (``cpp entry``: the package's
``bench_add_cpp()``, what a user calls for speed). ``torch.add`` is measured
in the same run, interleaved, so the ratios compare like with like; so is
``torch.ops.aten.add.Tensor``, the same add called the way every registered op
is called (through an ``OpOverload``): the floor no op called that way goes under.

    python bench/host_overhead.py [--number 20000]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import timeit
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _ops import generate_style  # noqa: E402

from opsdk._runtime.device import ensure_npu  # noqa: E402
from opsdk.axes import STYLES  # noqa: E402


def per_call_us(fn, number: int, repeat: int = 5) -> float:
    """Best of ``repeat`` runs, in microseconds per call (the least disturbed run)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def load_ops(root: Path) -> dict[str, object]:
    """Each style's generated add op (its ``OPS[0]``, the overload a model calls), and
    the cpp package's fast entry point, the function named after the op."""
    ops = {}
    for style in STYLES:
        project = generate_style(root, style)
        sys.path.insert(0, str(project))
        package = importlib.import_module(project.name)
        ops[style] = package.OPS[0]
        if style == "cpp":
            ops["cpp entry"] = getattr(package, project.name)
    return ops


def measure(number: int) -> dict[str, float]:
    ensure_npu()
    with tempfile.TemporaryDirectory(prefix="opsdk-bench-") as tmp:
        ops = load_ops(Path(tmp))
        row: dict[str, float] = {}
        for device in ("cpu", "npu"):
            x, y = torch.randn(4, 4, device=device), torch.randn(4, 4, device=device)
            base = per_call_us(lambda x=x, y=y: torch.add(x, y), number)
            row[f"torch.add {device} us"] = base
            floor = per_call_us(lambda x=x, y=y: torch.ops.aten.add.Tensor(x, y), number)
            row[f"aten.add.Tensor/torch.add {device}"] = floor / base
            for name, op in ops.items():
                us = per_call_us(lambda op=op, x=x, y=y: op(x, y), number)
                row[f"{name} {device} us"] = us
                row[f"{name}/torch.add {device}"] = us / base
        for name in ops:
            row[f"{name} npu/cpu"] = row[f"{name} npu us"] / row[f"{name} cpu us"]
    return row


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000, help="calls per timing run")
    row = measure(parser.parse_args(argv).number)
    for key, value in row.items():
        print(f"{key:28} {value:9.2f}")
    return row


if __name__ == "__main__":
    main()
