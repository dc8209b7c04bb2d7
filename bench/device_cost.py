"""The emulated npu device's cost over CPU for the aten ops the harness uses.

Every aten op on an npu tensor goes through opsdk's boxed PrivateUse1 fallback,
which runs it on CPU aliases of the npu tensors; this measures that detour per
op, interleaved with the same op on CPU tensors.

    python bench/device_cost.py [--number 5000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from host_overhead import per_call_us  # noqa: E402

from opsdk._runtime.device import ensure_npu  # noqa: E402

# What the harness does to npu tensors: make them, compute, copy, compare.
OPS = {
    "add": lambda x, y: torch.add(x, y),
    "add_ (in place)": lambda x, y: x.add_(y),
    "mul": lambda x, y: x * y,
    "clone": lambda x, y: x.clone(),
    "copy_": lambda x, y: x.copy_(y),
    "empty_like": lambda x, y: torch.empty_like(x),
    "view": lambda x, y: x.view(-1),
    "sum": lambda x, y: x.sum(),
    "to cpu": lambda x, y: x.to("cpu"),
}


def measure(number: int) -> dict[str, tuple[float, float]]:
    """Per op: (CPU microseconds, npu microseconds) per call."""
    ensure_npu()
    rows = {}
    for name, fn in OPS.items():
        timings = []
        for device in ("cpu", "npu"):
            x, y = torch.randn(4, 4, device=device), torch.randn(4, 4, device=device)
            timings.append(per_call_us(lambda fn=fn, x=x, y=y: fn(x, y), number))
        rows[name] = (timings[0], timings[1])
    return rows


def main(argv=None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=5000, help="calls per timing run")
    rows = measure(parser.parse_args(argv).number)
    print(f"{'aten op':16} {'cpu us':>8} {'npu us':>8} {'npu/cpu':>8}")
    for name, (cpu, npu) in rows.items():
        print(f"{name:16} {cpu:8.2f} {npu:8.2f} {npu / cpu:8.1f}")
    return rows


if __name__ == "__main__":
    main()
