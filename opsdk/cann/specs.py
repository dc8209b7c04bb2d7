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

import re
import textwrap

import torch

from opsdk._runtime import spec, types
from opsdk._runtime.inputs import SPEC_NAMES, names_dims
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp
from opsdk.errors import SpecError

__all__ = ["cases"]

# Formats whose rank is fixed (GE's ge::Format); ND and its kin leave it open.
FORMAT_RANKS = {"NCHW": 4, "NHWC": 4, "HWCN": 4, "CHWN": 4, "NCDHW": 5, "NDHWC": 5, "DHWCN": 5}
# ListInt attrs whose length is the rank of the tensors they describe.
_RANK_LISTS = ("perm", "strides", "dilations", "ksize", "kernel_size")
# Int attrs naming one dimension.
_DIM_ATTRS = ("axis", "dim")
_DEFAULT_RANK = 2
# Torch has these dtypes but its CPU kernels barely compute with them ("cumsum_out_cpu" not
# implemented for 'UInt64'): a row whose output is of one fails the reference, not the op
# (an input of one, a uint64 dequant scale, the reference reinterprets).
_NO_CPU_MATH = frozenset({"DT_UINT16", "DT_UINT32", "DT_UINT64"})
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
    found += [f"# {GIVEN}\n{given}"] if given not in found else []
    left = _left_out(op, ir, cann)
    if left:
        said = textwrap.wrap(f"left out here, kept in ir.py and the exports: {left}", 78)
        found[0] = "".join(f"# {line}\n" for line in said) + found[0]
    return tuple(found)


def _left_out(op, ir, cann) -> str:
    """The declared tensor dtypes no case has, each with the reason."""
    inputs = {ge for a in op.args if a.is_tensor for ge in cann.dtypes.get(ir.ir_name(a.name), ())}
    outputs = {ge for o in ir.outputs for ge in cann.dtypes.get(o.name, ())}
    by_reason: dict[str, list[str]] = {}
    for ge in sorted(inputs | outputs):
        if ge in _NO_CPU_MATH & outputs:
            by_reason.setdefault("torch's CPU kernels do not compute them", []).append(ge)
        elif ge in inputs and _spec_name(ge) is None:
            by_reason.setdefault("no torch dtype opsdk makes inputs of", []).append(ge)
    return "; ".join(f"{', '.join(ges)} ({why})" for why, ges in by_reason.items())


# What the last case is for, said above it where the user reads it (specs.py).
GIVEN = "optional inputs given, float and bool attrs off their defaults (a dropped one fails)"


def _case(op, ir, cann, row: int, shape, rank: int, given: bool = False) -> str | None:
    """Row ``row`` as a Support: tensors (and required values) positional while the schema
    lets them be, the rest by keyword; arguments with defaults are left to them, or, with
    ``given``, passed: optional inputs, float and bool attrs away from their defaults."""
    if any(_at(cann.dtypes.get(o.name, ()), row) in _NO_CPU_MATH for o in ir.outputs):
        return None
    parts, by_keyword = [], False
    for arg in op.args:
        if arg.is_tensor:
            declared = cann.dtypes.get(ir.ir_name(arg.name), ())
            value = _tensor(arg, declared, row, shape, given)
            if value is None:
                return None
        elif _is_value_input(ir, arg):
            value = _host_value(arg, rank, given)
        elif arg.has_default and (not given or _moved(arg) is None):
            by_keyword = True
            continue
        else:
            value = repr(_moved(arg) if arg.has_default else _sample(arg, rank))
        by_keyword = by_keyword or arg.kwarg_only
        parts.append(f"{arg.name}={value}" if by_keyword else value)
    return f"Support({', '.join(parts)})"


def _is_value_input(ir: IrDef, arg: spec.Arg) -> bool:
    """A ValueDepend input the torch side takes as host ints (``SymInt``, ``SymInt[]``)."""
    return any(i.value_depend and i.name == ir.ir_name(arg.name) for i in ir.inputs) and (
        types.base(arg.type).startswith("SymInt")
    )


def _host_value(arg: spec.Arg, rank: int, given: bool) -> str:
    """A ValueDepend input's values, declared: one named like a dimension ``Fixed(1)``
    (a kernel specializes on a dim, as the harness knows), another number ``OneOf(1, 2)``
    (graph columns vary a SymInt within it), a list of 2s (:func:`_list_length`); an
    optional one None unless ``given``."""
    if arg.is_optional and not given:
        return "None"
    if arg.is_list:
        return repr([2] * _list_length(arg.name, rank))
    return "Fixed(1)" if names_dims(arg.name) else "OneOf(1, 2)"


def _list_length(name: str, rank: int) -> int:
    """A value list's length as its name says: a pair per dim for paddings, the spatial
    dims for a resize's size (the two after N, C), else one per dim."""
    if re.fullmatch(r"pad(ding)?s", name):
        return 2 * rank
    if re.fullmatch(r"(output_)?sizes?", name) and rank > 2:
        return rank - 2
    return rank


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
    name = _spec_name(_at(declared, row))
    if name is None:
        return None
    one = f"{name}({', '.join(map(str, shape))})"
    return f"[{one}, {one}]" if arg.is_list else one


def _at(declared: tuple[str, ...], row: int) -> str:
    """A tensor's type in row ``row``: a one-entry list serves every row, none is float32."""
    return declared[row] if row < len(declared) else (declared[0] if declared else "DT_FLOAT")


def _spec_name(ge: str) -> str | None:
    """The spec constructor of GE data type ``ge`` (``F16``), None if torch has none."""
    torch_name = types.DTYPES[ge].torch
    return SPEC_NAMES.get(getattr(torch, torch_name)) if torch_name else None


def _rank(cann: CannOp) -> int:
    """The tensors' rank as the definition hints it: a fixed-rank format, a rank-long list
    attr's default, a dim attr's default; else 2."""
    hints = [
        FORMAT_RANKS.get(f.removeprefix("FORMAT_"))
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
