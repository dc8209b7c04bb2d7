"""The input specs ``opsdk new --from-cann`` writes: what a CANN definition says of its cases.

A CANN definition states the data types an op takes (column i of every tensor's list is
one supported row) and its attrs' defaults; it does not state shapes. The specs follow
what it states, one ``Support`` per row torch can make, and guess the rest as little as
possible: a tensor's rank from its format (``NCHW`` is 4-D) or from attrs that give it
(``perm``, ``strides``, an ``axis``/``dim`` default), sizes that keep several tensors
compatible (all alike, so an elementwise op, a matmul and a broadcast all run), distinct
sizes for a lone tensor (so a fake that swaps dims shows). The generated file says that
the sizes are a guess. Arguments follow the torch op's order and names, so an attached
op whose schema orders them otherwise gets the same cases.
"""

from __future__ import annotations

import torch

from opsdk._runtime import spec, types
from opsdk._runtime.inputs import SPEC_NAMES
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp
from opsdk.errors import SpecError

__all__ = ["cases"]

# Formats whose rank is fixed (GE's ge::Format); ND and its kin leave it open.
_FORMAT_RANKS = {"NCHW": 4, "NHWC": 4, "HWCN": 4, "CHWN": 4, "NCDHW": 5, "NDHWC": 5, "DHWCN": 5}
# ListInt attrs whose length is the rank of the tensors they describe.
_RANK_LISTS = ("perm", "strides", "dilations", "ksize", "kernel_size")
# Int attrs naming one dimension.
_DIM_ATTRS = ("axis", "dim")
_DEFAULT_RANK = 2
# A value for a required attr, which CANN gives none of, by schema type.
_SAMPLE = {"int": 1, "float": 1.0, "bool": False, "str": "", "ScalarType": torch.float32}


def cases(op: spec.OpSpec, ir: IrDef, cann: CannOp) -> tuple[str, ...]:
    """Python source of each ``Support(...)`` of the op ``op`` bound to CANN's ``ir``."""
    rank = _rank(cann)
    tensors = [a for a in op.args if a.is_tensor]
    shape = (4,) * rank if len(tensors) > 1 else tuple(range(2, 2 + rank))
    width = max((len(cann.dtypes.get(ir.ir_name(a.name), ())) for a in tensors), default=1)
    made = {row: _case(op, ir, cann, row, shape, rank) for row in range(max(width, 1))}
    rows = [row for row, case in made.items() if case is not None]
    found = list(dict.fromkeys(made[row] for row in rows))  # each case once, in row order
    if not found:
        raise SpecError(
            f"{ir.op_type}: no declared dtype combination has torch dtypes "
            f"({', '.join(SPEC_NAMES.values())}); write specs.py by hand"
        )
    # The rows leave optional inputs out and attrs at CANN's defaults, which GE fills in
    # itself: a converter that drops one would pass them all. One case more gives them.
    given = _case(op, ir, cann, rows[0], shape, rank, given=True)
    return tuple(found) + ((f"# {GIVEN}\n{given}",) if given not in found else ())


# What the last case is for, said above it where the user reads it (specs.py).
GIVEN = "optional inputs given, float and bool attrs off their defaults (a dropped one fails)"


def _case(op, ir, cann, row: int, shape, rank: int, given: bool = False) -> str | None:
    """Row ``row`` as a Support: tensors (and required values) positional while the schema
    lets them be, the rest by keyword; arguments with defaults are left to them, or, with
    ``given``, passed: optional inputs, float and bool attrs away from their defaults."""
    parts, by_keyword = [], False
    for arg in op.args:
        if arg.is_tensor:
            declared = cann.dtypes.get(ir.ir_name(arg.name), ())
            value = _tensor(arg, declared, row, shape, given)
            if value is None:
                return None
        elif arg.has_default and (not given or _moved(arg) is None):
            by_keyword = True
            continue
        else:
            value = repr(_moved(arg) if arg.has_default else _sample(arg, rank))
        by_keyword = by_keyword or arg.kwarg_only
        parts.append(f"{arg.name}={value}" if by_keyword else value)
    return f"Support({', '.join(parts)})"


def _moved(arg: spec.Arg):
    """A value other than ``arg``'s default that the op surely takes: a float's default
    plus 0.5 (an eps that changes the result), a bool's opposite; None for other types."""
    if isinstance(arg.default, bool):
        return not arg.default
    if types.base(arg.type) == "float" and isinstance(arg.default, (int, float)):
        return arg.default + 0.5
    return None


def _tensor(
    arg: spec.Arg, declared: tuple[str, ...], row: int, shape, given: bool = False
) -> str | None:
    """A tensor argument's spec in dtype row ``row`` (a one-entry list serves every row, an
    undeclared type is float32); None when torch has no spec for that dtype. An optional
    input is None unless ``given``."""
    if arg.is_optional and not given:
        return "None"
    ge = declared[row] if row < len(declared) else (declared[0] if declared else "DT_FLOAT")
    torch_name = types.DTYPES[ge].torch
    name = SPEC_NAMES.get(getattr(torch, torch_name)) if torch_name else None
    if name is None:
        return None
    one = f"{name}({', '.join(map(str, shape))})"
    return f"[{one}, {one}]" if arg.is_list else one


def _rank(cann: CannOp) -> int:
    """The tensors' rank as the definition hints it: a fixed-rank format, a rank-long list
    attr's default, a dim attr's default; else 2."""
    hints = [
        _FORMAT_RANKS.get(f.removeprefix("FORMAT_"))
        for formats in cann.formats.values()
        for f in formats
    ]
    for attr in cann.ir.attrs:
        if attr.name in _RANK_LISTS and isinstance(attr.default, tuple) and attr.default:
            hints.append(len(attr.default))
        if attr.name in _DIM_ATTRS and isinstance(attr.default, int):  # at least that many
            least = attr.default + 1 if attr.default >= 0 else -attr.default
            hints.append(max(least, _DEFAULT_RANK))
    return max([h for h in hints if h], default=_DEFAULT_RANK)


def _sample(arg: spec.Arg, rank: int):
    """A value for a required non-tensor argument: CANN states none."""
    element = types.base(arg.type).removesuffix("[]")
    if arg.name == "perm" and arg.is_list:
        return list(reversed(range(rank)))
    one = _SAMPLE.get("int" if element == "SymInt" else "float" if element == "Scalar" else element)
    return [one] if arg.is_list else one
