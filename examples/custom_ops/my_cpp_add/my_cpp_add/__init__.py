"""An Ascend NPU custom op, scaffolded by opsdk.

Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then registers the op from its modules:

- my_cpp_add.cpp: schema and kernels in C++ (compiled on the first import,
  then cached by opsdk.cpp_build), and the op's fast entry point,
  exported here as my_cpp_add()
- fake.py: the fake function
- ir.py: the GE IR definition
- specs.py: the inputs the op supports
- converter.py: the GE converter, loaded as soon as TorchAir is importable

Each subpackage with an ``OPS`` tuple is one more op of this library (``opsdk
new --into``): it is imported, and its ops listed in ``OPS`` here too.
"""

from pathlib import Path

import torch
from opsdk.converters import load_converters
from opsdk.cpp_build import load_module
from opsdk.device import ensure_npu
from opsdk.fast_entry import traceable
from opsdk.oplib import import_added_ops

ensure_npu()
_library = load_module(Path(__file__).with_name("my_cpp_add.cpp"))

# The op's OpOverload, which the package's other modules import.
OP = torch.ops.opsdk_examples.my_cpp_add.default

from . import fake, ir, specs  # noqa: E402, F401  (imported to register the op)

# This op, then those `opsdk new --into` added as subpackages.
OPS = (OP, *import_added_ops(__name__, __path__))

# The fastest way to call the op from Python; same semantics as OP (which torch.compile
# traces in its place).
my_cpp_add = traceable(_library.my_cpp_add, OP)

load_converters(f"{__name__}.converter")
