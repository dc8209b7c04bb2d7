"""The GE side offline: ``_torchair`` stand-in (``standin``) and the GE reference executor.

``proto`` decodes GE protobuf values, ``kernels`` holds the built-in op kernels by
family, ``custom_op`` runs a custom op node through its torch op, ``executor`` runs a graph.
"""

from opsdk.offline.ge.errors import GeExecutionError, GeGraphError
from opsdk.offline.ge.executor import GeGraphExecutor, supported_op_types
from opsdk.offline.ge.proto import (
    decode_attr,
    decode_const,
    torch_dtype_from_ge,
    torch_dtype_from_proto,
)

__all__ = [
    "GeExecutionError",
    "GeGraphError",
    "GeGraphExecutor",
    "decode_attr",
    "decode_const",
    "supported_op_types",
    "torch_dtype_from_ge",
    "torch_dtype_from_proto",
]
