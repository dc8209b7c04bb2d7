"""The input specs ``opsdk new --from-cann`` writes: what a CANN definition says of its cases.

A CANN definition states the data types an op takes (column i of every tensor's list is
one supported row) and its attrs' defaults; it does not state shapes. The specs follow
what it states, one ``Support`` per row torch can make, and guess the rest as little as
possible: sizes are :mod:`opsdk.cann.sizes`' (ranks from formats and attrs). Where
``opsdk new`` has the op's own InferShape, every case is held to it before it is written,
static and dynamic (:mod:`opsdk.cann.held`): a row it refuses is left out, and the file
says so, and says when it accepted nothing (the guess then stays). Arguments follow the
torch op's order and names, so an attached op whose schema orders them otherwise gets
the same cases.
"""

from __future__ import annotations

import re
import struct
import textwrap
from collections.abc import Sequence

import torch

from opsdk._runtime import spec, types
from opsdk._runtime.inputs import SPEC_NAMES, names_dims
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp, counts, held
from opsdk.cann.infer.call import Given
from opsdk.cann.tiling.run import Case
from opsdk.errors import SpecError

__all__ = ["TESTED", "cases"]

# Torch has these dtypes but its CPU kernels barely compute with them ("cumsum_out_cpu" not
# implemented for 'UInt64'): a row whose output is of one fails the reference, not the op
# (an input of one, a uint64 dequant scale, the reference reinterprets).
_NO_CPU_MATH = frozenset({"DT_UINT16", "DT_UINT32", "DT_UINT64"})
# A value for a required attr, which CANN gives none of, by schema type.
_SAMPLE = {"int": 1, "float": 1.0, "bool": False, "str": "", "ScalarType": torch.float32}


def cases(
    op: spec.OpSchema, ir: IrDef, cann: CannOp, accepts=None, tested: Sequence[Case] = ()
) -> tuple[str, ...]:
    """Python source of each ``Support(...)`` of the op ``op`` bound to CANN's ``ir``.
    ``accepts(shapes, values, dtypes)``: whether the op's InferShape accepts a case (IR
    names; see :func:`opsdk.scaffold.cann_infer.acceptor`): every case written is one it
    accepts, static and dynamic (:mod:`opsdk.cann.held`), or is left out and said so.
    ``tested``: the op's own host tests' cases (:mod:`opsdk.cann.ut_cases`), smallest
    first: the first :data:`TESTED` torch can make follow, each named after its test."""
    return (*_defined(op, ir, cann, accepts), *_tested(op, ir, tested))


# How many of the op's own tested cases the specs take (the smallest: each is run in
# every column).
TESTED = 3


def _tested(op: spec.OpSchema, ir: IrDef, tested: Sequence[Case]) -> list[str]:
    """The first :data:`TESTED` of ``tested`` as Supports, each under its test's name."""
    found: dict[str, str] = {}
    for case in tested:
        text = _own_case(op, ir, case)
        if text is not None and text not in found and len(found) < TESTED:
            found[text] = f"# the op's own test {case.label.split(': ')[0]}\n{text}"
    return list(found.values())


def _own_case(op: spec.OpSchema, ir: IrDef, case: Case) -> str | None:
    """``case`` (IR order) as a Support of ``op``: tensors positional while the schema
    lets them be, attrs off their defaults by keyword; None where torch cannot make one
    of its tensors or the schema has no place for a value it gives."""
    given = dict(zip(ir.ir_input_names, case.inputs, strict=True))
    attrs = dict(zip(ir.ir_attr_names, case.attrs, strict=False))
    parts, by_keyword = [], False
    for arg in op.args:
        name = ir.ir_name(arg.name)
        if name in given:
            value = _tested_input(arg, given[name], _is_value_input(ir, arg))
            if value is None:
                return None
        elif name in attrs and (not arg.has_default or not _same(attrs[name], arg.default)):
            value = _attr_text(arg, attrs[name])
            if value is None:
                return None
            by_keyword = by_keyword or arg.has_default
        else:
            by_keyword = True
            continue
        by_keyword = by_keyword or arg.kwarg_only
        parts.append(f"{arg.name}={value}" if by_keyword else value)
    return f"Support({', '.join(parts)})"


def _tested_input(arg: spec.Arg, instances: tuple[Given, ...], host: bool) -> str | None:
    """A tested input's spec: None (absent), its host values (``Fixed``), a tensor of its
    dtype and shape, a list of them; None where torch has no spec for its dtype."""
    if not instances:
        return "None" if arg.is_optional else None
    if host:
        values = _host_ints(instances[0])
        if values is None:
            return None
        return f"Fixed({values!r})" if arg.is_list else f"Fixed({values[0]})"
    specs = []
    for one in instances:
        name = _spec_name(types.BY_GE_VALUE[one.dtype].ge)
        if name is None or one.data is not None:
            return None
        specs.append(f"{name}({', '.join(map(str, one.shape))})")
    return f"[{', '.join(specs)}]" if arg.is_list else specs[0] if len(specs) == 1 else None


def _host_ints(given: Given) -> list[int] | None:
    """A value input's host data as ints, None without any or of a float type."""
    size = {"DT_INT64": "q", "DT_INT32": "i", "DT_UINT64": "Q", "DT_UINT32": "I"}
    code = size.get(types.BY_GE_VALUE[given.dtype].ge)
    if given.data is None or code is None:
        return None
    return list(struct.unpack(f"<{len(given.data) // struct.calcsize(code)}{code}", given.data))


def _same(value, default) -> bool:
    """Whether a tested attr's value is the schema's default (a tuple its list)."""
    return (list(value) if isinstance(value, tuple) else value) == (
        list(default) if isinstance(default, tuple) else default
    )


def _attr_text(arg: spec.Arg, value) -> str | None:
    """A tested attr's value as the schema takes it; None for a type it would need
    translated (a dtype attr's GE number)."""
    if types.base(arg.type) == "ScalarType":
        return None
    return repr(list(value) if isinstance(value, tuple) else value)


def _defined(op: spec.OpSchema, ir: IrDef, cann: CannOp, accepts) -> tuple[str, ...]:
    """The cases made from the definition (see :func:`cases`)."""
    tensors = [a for a in op.args if a.is_tensor]
    names = [ir.ir_name(a.name) for a in tensors]
    hosts = [a for a in op.args if _is_value_input(ir, a) or _is_tried(ir, a)]
    spelled = {ir.ir_name(a.name): a.name for a in hosts if _is_value_input(ir, a)}

    def hold(search: held.Search, row: int, given: bool) -> held.Choice | None:
        present = [n for a, n in zip(tensors, names, strict=True) if given or not a.is_optional]
        moved = [a for a in op.args if given and a.has_default and a not in hosts]
        attrs = {ir.ir_name(a.name): _moved(a) for a in moved if _moved(a) is not None}
        dtypes = {i.name: _at(cann.dtypes.get(i.name, ()), row) for i in ir.inputs}
        values = lambda rank: _choices(ir, hosts, rank, given)  # noqa: E731
        return search.find(present, values, dtypes, attrs, spelled)

    guessed = held.Search(cann, names, None)
    width = max((len(cann.dtypes.get(n, ())) for n in names), default=1)
    rows = [r for r in range(max(width, 1)) if _case(op, ir, cann, r, hold(guessed, r, False))]
    if not rows:
        raise SpecError(
            f"{ir.op_type}: no declared dtype combination has torch dtypes "
            f"({', '.join(SPEC_NAMES.values())}); write specs.py by hand"
        )
    search = held.Search(cann, names, accepts)
    chosen = {row: hold(search, row, False) for row in rows}
    accepted = [row for row in rows if chosen[row] is not None]
    if not accepted:  # the C++ took none: the first guess stays, said
        search, accepted, chosen = guessed, rows, {r: hold(guessed, r, False) for r in rows}
    # each case once, in row order
    cased = (_case(op, ir, cann, row, chosen[row]) for row in accepted)
    found = [case for case in dict.fromkeys(cased) if case is not None]
    # The rows leave optional inputs out and attrs at CANN's defaults, which GE fills in
    # itself: a converter that drops one would pass them all. One case more gives them.
    given_choice = hold(search, accepted[0], True)
    given = given_choice and _case(op, ir, cann, accepted[0], given_choice, given=True)
    found += [f"# {GIVEN}\n{given}"] if given and given not in found else []
    left = _left_out(op, ir, cann)
    notes = [f"left out here, kept in ir.py and the exports: {left}"] if left else []
    refused = [_row_name(op, ir, cann, row) for row in rows if row not in accepted]
    notes += [f"{REFUSED_ROWS}: {'; '.join(refused)}"] if refused else []
    notes += [REFUSED_GIVEN] if given_choice is None else []
    notes += [REFUSED] if search is guessed and accepts is not None else []
    for note in reversed(notes):
        found[0] = "".join(f"# {line}\n" for line in textwrap.wrap(note, 78)) + found[0]
    return tuple(found)


# Said above the cases when the op's InferShape accepted none of the sizes tried.
REFUSED = (
    "the op's C++ InferShape accepted none of the sizes opsdk tried: set sizes it "
    "accepts (the ge column's layer infer says what it refuses)"
)
# Said when it accepted some rows, or the rows but not the case giving optional inputs.
REFUSED_ROWS = "left out, the op's C++ InferShape accepted no sizes opsdk tried with them"
REFUSED_GIVEN = (
    "the case giving optional inputs and attrs off their defaults is left out: the op's C++ "
    "InferShape accepted no sizes opsdk tried with them"
)


def _is_tried(ir: IrDef, arg: spec.Arg) -> bool:
    """A non-tensor argument whose values the C++ is asked: a required one (CANN gives no
    value), an int or int list attr with a default (the C++ may refuse it: SplitV's
    ``num_split=0``) unless it counts a dynamic input."""
    if arg.is_tensor or _is_value_input(ir, arg):
        return False
    if not arg.has_default:
        return True
    name = ir.ir_name(arg.name)
    ints = types.base(arg.type).removesuffix("[]") in ("int", "SymInt")
    attr = next((a for a in ir.attrs if a.name == name), None)
    return ints and attr is not None and not attr.dtype and name not in counts(ir)


def _choices(ir: IrDef, hosts: list[spec.Arg], rank: int, given: bool) -> dict[str, list]:
    """The values each host argument is tried at (IR name -> values, the guess first): a
    value input's (:func:`_host_value`), a required attr's (:func:`_sample`), another
    attr's default."""
    choices = {}
    for arg in hosts:
        if _is_value_input(ir, arg):
            first = _host_value(arg, rank, given)
        elif arg.has_default:
            first = list(arg.default) if isinstance(arg.default, (list, tuple)) else arg.default
        else:
            first = _sample(arg, rank)
        choices[ir.ir_name(arg.name)] = held.values(arg.name, first, rank)
    return choices


def _row_name(op, ir, cann, row: int) -> str:
    """Dtype row ``row`` as the specs name its tensors' dtypes (``F16, I8``)."""
    tensors = [a for a in op.args if a.is_tensor]
    named = (_spec_name(_at(cann.dtypes.get(ir.ir_name(a.name), ()), row)) for a in tensors)
    return ", ".join(dict.fromkeys(n for n in named if n))


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


def _case(op, ir, cann, row: int, choice: held.Choice | None, given: bool = False) -> str | None:
    """Row ``row`` at ``choice``'s sizes and values as a Support: tensors (and required
    values) positional while the schema lets them be, the rest by keyword; arguments with
    defaults are left to them, or, with ``given``, passed: optional inputs, float and bool
    attrs away from their defaults; None without a choice (the C++ took none)."""
    if choice is None:
        return None
    if any(_at(cann.dtypes.get(o.name, ()), row) in _NO_CPU_MATH for o in ir.outputs):
        return None
    parts, by_keyword = [], False
    for arg in op.args:
        name = ir.ir_name(arg.name)
        if arg.is_tensor:
            declared = cann.dtypes.get(name, ())
            static = choice.static.get(name, ())
            value = _tensor(arg, declared, row, choice.shapes[name], given, static)
            if value is None:
                return None
        elif _is_value_input(ir, arg):
            value = _host_text(arg, choice.values[name], name in choice.kept)
        elif arg.has_default and _is_tried(ir, arg):
            tried = choice.values[name]
            if tried == (list(arg.default) if isinstance(tried, list) else arg.default):
                by_keyword = True
                continue
            by_keyword, value = True, repr(tried)
        elif arg.has_default and (not given or _moved(arg) is None):
            by_keyword = True
            continue
        else:
            value = repr(_moved(arg) if arg.has_default else choice.values[name])
        by_keyword = by_keyword or arg.kwarg_only
        parts.append(f"{arg.name}={value}" if by_keyword else value)
    return f"Support({', '.join(parts)})"


def _is_value_input(ir: IrDef, arg: spec.Arg) -> bool:
    """A ValueDepend input the torch side takes as host ints (``SymInt``, ``SymInt[]``)."""
    return any(i.value_depend and i.name == ir.ir_name(arg.name) for i in ir.inputs) and (
        types.base(arg.type).startswith("SymInt")
    )


def _host_value(arg: spec.Arg, rank: int, given: bool):
    """A ValueDepend input's first guess: a list of 2s (:func:`_list_length`), else 1; an
    optional one None unless ``given``."""
    if arg.is_optional and not given:
        return None
    return [2] * _list_length(arg.name, rank) if arg.is_list else 1


def _host_text(arg: spec.Arg, value, kept: bool) -> str:
    """A ValueDepend input's values, declared: a number named like a dimension, or one the
    C++ needs kept, ``Fixed(v)`` (a kernel specializes on a dim, as the harness knows),
    another ``OneOf(v, v + 1)`` (graph columns vary a SymInt within it); a list as it is
    (the harness steps it) or ``Fixed`` when kept."""
    if value is None:
        return "None"
    if isinstance(value, list):
        return f"Fixed({value!r})" if kept else repr(value)
    return f"Fixed({value})" if kept or names_dims(arg.name) else f"OneOf({value}, {value + 1})"


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
    arg: spec.Arg, declared: tuple[str, ...], row: int, shape, given: bool, static=()
) -> str | None:
    """A tensor argument's spec in dtype row ``row`` (a one-entry list serves every row, an
    undeclared type is float32), ``static`` its dims dynamic mode keeps; None when torch
    has no spec for that dtype. An optional input is None unless ``given``."""
    if arg.is_optional and not given:
        return "None"
    name = _spec_name(_at(declared, row))
    if name is None:
        return None
    sizes = [*map(str, shape), *([f"static_dims={static!r}"] if static else [])]
    one = f"{name}({', '.join(sizes)})"
    return f"[{one}, {one}]" if arg.is_list else one


def _at(declared: tuple[str, ...], row: int) -> str:
    """A tensor's type in row ``row``: a one-entry list serves every row, none is float32."""
    return declared[row] if row < len(declared) else (declared[0] if declared else "DT_FLOAT")


def _spec_name(ge: str) -> str | None:
    """The spec constructor of GE data type ``ge`` (``F16``), None if torch has none."""
    torch_name = types.DTYPES[ge].torch
    return SPEC_NAMES.get(getattr(torch, torch_name)) if torch_name else None


def _sample(arg: spec.Arg, rank: int):
    """A value for a required non-tensor argument: CANN states none."""
    element = types.base(arg.type).removesuffix("[]")
    if arg.name == "perm" and arg.is_list:
        return list(reversed(range(rank)))
    one = _SAMPLE.get("int" if element == "SymInt" else "float" if element == "Scalar" else element)
    return [one] if arg.is_list else one
