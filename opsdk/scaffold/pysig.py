"""Python spellings of an op's schema, for generated code.

Generated kernels, fake functions and converters are plain Python functions
whose parameters mirror the schema; this module gives the templates the Python
type and default of each argument (the macros write the signatures).
"""

from __future__ import annotations

from opsdk.runtime.spec import Arg
from opsdk.runtime.types import TYPES


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
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float)) for v in value):
        return repr(tuple(value)) if len(value) != 1 else f"({value[0]!r},)"
    return "None"
