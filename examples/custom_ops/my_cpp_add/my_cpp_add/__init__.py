"""An Ascend NPU custom op, scaffolded by opsdk.

Schema:
    my_cpp_add(Tensor x, Tensor y) -> Tensor

Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then loads the op library
my_cpp_add.cpp, schema and kernels in C++ (compiled on the first import, then
cached by opsdk.cpp_build), and registers the fake function (fake.py), the GE
IR definition (ir.py), the input specs (specs.py) and, as soon as TorchAir is
importable, the GE converter (converter.py).
"""

from pathlib import Path

import torch
from opsdk.converters import load_converters
from opsdk.cpp_build import load_library
from opsdk.device import ensure_npu

ensure_npu()
load_library(Path(__file__).with_name("my_cpp_add.cpp"))

from . import fake, ir, specs  # noqa: E402, F401  (imported to register the op)

OPS = (torch.ops.opsdk_examples.my_cpp_add.default,)

load_converters(f"{__name__}.converter")
