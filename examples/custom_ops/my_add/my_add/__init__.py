"""An Ascend NPU custom op, scaffolded by opsdk.

Schema:
    my_add(Tensor x, Tensor y) -> Tensor

Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then registers the op: schema and
kernels (schema.py, kernels.py), fake function (fake.py), GE IR definition
(ir.py), input specs (specs.py) and, as soon as TorchAir is importable, the
GE converter (converter.py).
"""

import torch
from opsdk.converters import load_converters
from opsdk.device import ensure_npu

ensure_npu()

from . import fake, ir, schema, specs  # noqa: E402, F401  (imported to register the op)

OPS = (torch.ops.opsdk_examples.my_add.default,)

load_converters(f"{__name__}.converter")
