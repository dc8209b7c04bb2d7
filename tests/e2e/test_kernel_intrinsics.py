"""The arithmetic of opsdk's AscendC stand-in instructions against torch: each run by
the intrinsics project's kernel (one library for the module), float32 over one repeat.
The instructions passed as function pointers (ops-nn's foreach kernels' way) compute what
their calls compute; the advanced math computes in float32 (the op's tolerance, not
bit-exactness, as on the NPU)."""

from __future__ import annotations

import struct

import pytest
import torch
from kernel_twin import PROJECTS, TilingRun

from opsdk.cann import kernel

INTRINSICS = PROJECTS / "intrinsics" / "op_kernel"
N = 45  # a partial repeat: the count forms and the mask both cut short


@pytest.fixture(scope="module")
def intrinsics():
    compiled = kernel.Kernel(kernel.build(kernel.entry_of(INTRINSICS / "intrinsics.cpp")))
    yield compiled
    compiled.close()


def run(intrinsics, which: int, x: torch.Tensor) -> torch.Tensor:
    tiling = TilingRun(struct.pack("<2I", len(x), which), 1, 0, (0,))
    launch = intrinsics.launch({"x": x.numpy().tobytes()}, {"y": len(x) * 4}, tiling)
    assert launch.findings == ()
    return torch.frombuffer(bytearray(launch.outputs["y"]), dtype=torch.float32)


@pytest.mark.parametrize(
    "which, expected",
    [
        (0, torch.exp),
        (1, lambda x: x * x),
        (2, lambda x: x - x),
        (3, lambda x: x + 0.5),
        (4, torch.acos),
        (10, torch.log10),
        (11, torch.tan),
        (12, torch.asin),
        (13, torch.atan),
        (14, torch.sinh),
        (15, torch.cosh),
        (16, torch.special.erfc),
        (17, lambda x: torch.pow(2.0, x)),
        (18, lambda x: x.sum().expand(len(x))),
    ],
    ids=[
        "exp*",
        "mul*",
        "sub-level0*",
        "adds*",
        "acos*",
        "log10",
        "tan",
        "asin",
        "atan",
        "sinh",
        "cosh",
        "erfc",
        "power-scalar-base",
        "getaccval",
    ],  # fmt: skip
)
def test_an_instruction_computes_what_torch_does(intrinsics, which, expected):
    """``*``: passed as a template argument of a function pointer type."""
    x = torch.rand(N) * 0.98 + 0.01  # inside every function's domain
    assert torch.allclose(run(intrinsics, which, x), expected(x), rtol=1e-5, atol=1e-6)
