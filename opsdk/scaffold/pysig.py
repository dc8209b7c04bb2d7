"""Python spellings of an op's schema, for generated code.

Generated kernels, fake functions and converters are plain Python functions
whose parameters mirror the schema; this module gives the templates the Python
type and default of each argument (the macros write the signatures).
"""

from __future__ import annotations

import functools

import torch

from opsdk._runtime.spec import Arg
from opsdk._runtime.types import DTYPES, TYPES, base


def py_type(schema_type: str) -> str:
    """``Tensor?[]`` -> ``list[torch.Tensor | None]`` and so on."""
    if schema_type.endswith("?"):
        return f"{py_type(schema_type[:-1])} | None"
    if schema_type.endswith("]"):
        return f"list[{py_type(schema_type[: schema_type.index('[')])}]"
    row = TYPES.get(schema_type)
    return row.py if row is not None else "object"


def default(arg: Arg) -> str:
    """Python source of ``arg``'s default (``None`` where Python cannot spell it)."""
    value = arg.default
    if base(arg.type) == "ScalarType" and isinstance(value, int):
        name = _torch_dtype_names().get(value)
        return f"torch.{name}" if name else "None"
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float)) for v in value):
        return repr(tuple(value)) if len(value) != 1 else f"({value[0]!r},)"
    return "None"


@functools.cache
def _torch_dtype_names() -> dict[int, str]:
    """torch's ScalarType numbers (a parsed schema's ``ScalarType`` default) -> dtype name,
    numbered by torch's own schema parser."""
    names = {}
    for name in (d.torch for d in DTYPES.values() if d.torch):
        parsed = torch._C.parse_schema(f"f(ScalarType d={name}) -> ()").arguments[0]
        names.setdefault(parsed.default_value, name)
    return names
