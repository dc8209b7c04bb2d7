"""Python spellings of an op's schema, for generated code.

Generated kernels, fake functions and converters are plain Python functions
whose parameters mirror the schema; this module turns an :class:`OpSpec` into
their annotated signatures, laid out the way ``ruff format`` would lay them out.
"""

from __future__ import annotations

from opsdk.runtime.spec import Arg, OpSpec
from opsdk.runtime.types import TYPES

LINE_LENGTH = 100


def py_type(schema_type: str) -> str:
    """``Tensor?[]`` -> ``list[torch.Tensor | None]`` and so on."""
    if schema_type.endswith("?"):
        return f"{py_type(schema_type[:-1])} | None"
    if schema_type.endswith("]"):
        return f"list[{py_type(schema_type[: schema_type.index('[')])}]"
    row = TYPES.get(schema_type)
    return row.py if row is not None else "object"


def _default(arg: Arg) -> str:
    value = arg.default
    if isinstance(value, (bool, int, float, str, type(None))):
        return repr(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float)) for v in value):
        return repr(tuple(value)) if len(value) != 1 else f"({value[0]!r},)"
    return "None"


def parameters(spec: OpSpec, *, annotate: bool = True) -> list[str]:
    """One entry per parameter, ``*`` included before keyword-only ones."""
    params: list[str] = []
    star_done = False
    for arg in spec.args:
        if arg.kwarg_only and not star_done:
            params.append("*")
            star_done = True
        text = f"{arg.name}: {py_type(arg.type)}" if annotate else arg.name
        if arg.has_default:
            text += f" = {_default(arg)}" if annotate else f"={_default(arg)}"
        params.append(text)
    return params


def return_annotation(spec: OpSpec) -> str:
    if not spec.returns:
        return "None"
    types = [py_type(r.type) for r in spec.returns]
    return types[0] if len(types) == 1 else f"tuple[{', '.join(types)}]"


def def_line(name: str, params: list[str], returns: str, indent: str = "") -> str:
    """``def name(params) -> returns:``, split one parameter per line when too long."""
    one_line = f"{indent}def {name}({', '.join(params)}) -> {returns}:"
    if len(one_line) <= LINE_LENGTH:
        return one_line
    inner = "".join(f"{indent}    {p},\n" for p in params)
    return f"{indent}def {name}(\n{inner}{indent}) -> {returns}:"


def call_args(spec: OpSpec) -> str:
    """Arguments forwarding every parameter: positional ones by position, the rest by name."""
    return ", ".join(a.name if not a.kwarg_only else f"{a.name}={a.name}" for a in spec.args)
