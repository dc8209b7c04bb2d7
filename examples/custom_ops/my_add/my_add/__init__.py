"""An Ascend NPU custom op, scaffolded by opsdk.

Importing this package makes sure an "npu" device exists (torch_npu on an NPU
host, opsdk's emulated device elsewhere), then registers the op from its modules:

- schema.py, kernels.py: the schema and the kernels
- fake.py: the fake function
- ir.py: the GE IR definition
- specs.py: the inputs the op supports
- converter.py: the GE converter, loaded as soon as TorchAir is importable

Each subpackage with an ``OPS`` tuple is one more op of this library (``opsdk
new --into``): it is imported, and its ops listed in ``OPS`` here too.
"""

from opsdk.converters import load_converters
from opsdk.device import ensure_npu
from opsdk.oplib import import_added_ops

ensure_npu()

from . import fake, ir, specs  # noqa: E402, F401  (imported to register the op)
from .schema import OP  # noqa: E402

# This op, then those `opsdk new --into` added as subpackages.
OPS = (OP, *import_added_ops(__name__, __path__))

load_converters(f"{__name__}.converter")
