"""The torch side of a CANN op: what ``opsdk new --from-cann`` derives from a :class:`CannOp`.

CANN's prototype fixes the GE side (op type, input/output/attr names, data types);
this module writes the matching torch schema (optional inputs ``Tensor?``, dynamic
inputs ``Tensor[]``, attrs positional after them with their defaults, an output named like
an input makes that input ``Tensor(a!)``, an OpDef ``.Scalar()`` input is a
``Scalar``, an integer ``.ValueDepend(...)`` input a host ``SymInt`` or ``SymInt[]``, an
``N`` counting a dynamic input no argument)
and the IR tied to it (CANN names, with ``arg_names`` where a CANN name cannot
be a Python argument); the input specs are :mod:`opsdk.cann.specs`'.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from opsdk import cann
from opsdk._runtime import types
from opsdk._runtime.irdef import IrDef
from opsdk.errors import SpecError

__all__ = ["TorchSide", "pick", "torch_side"]


@dataclass(frozen=True)
class TorchSide:
    schema: str  # without the op name: "(Tensor x, ...) -> ..."
    ir: IrDef  # CANN's IR, tied to the torch op by opsdk new (torch_op, arg_names)
    op: cann.CannOp  # the definition it came from: its dtypes give specs.py
    # Whether the op's C++ InferShape accepts a case (see opsdk.cann.specs.cases); None: no
    # InferShape at hand.
    accepts: Callable[[dict, dict, dict | None], bool] | None = None
    # The op's own host tests' cases, smallest first (opsdk.scaffold.cann_tiling.tested).
    tested: tuple = ()


def pick(ops: list[cann.CannOp], name: str | None, where: str) -> cann.CannOp:
    """The op ``name`` (snake_case of its op type, or the op type) among ``ops``; the only
    one if there is one."""
    if len(ops) == 1:
        return ops[0]
    from opsdk.cann.exports import file_stem

    spelled = (name or "").replace("_", "").lower()  # top_k_v2 and top_kv2 name TopKV2
    found = [op for op in ops if name == op.ir.op_type or spelled == op.ir.op_type.lower()]
    if not found:
        names = ", ".join(file_stem(op.ir) for op in ops)
        raise SpecError(f"{where} defines several ops; name one of them: {names}")
    return found[0]


def torch_side(op: cann.CannOp) -> TorchSide:
    ir = op.ir
    if not ir.outputs:  # a torch op must return a tensor or mark the one it writes
        raise SpecError(
            f"{ir.op_type}: no output is declared, so which input it writes (if any) is not in "
            "its definition; write the op's torch side by hand"
        )
    torch_names = {n: _py_name(n) for n in (*ir.ir_input_names, *ir.ir_attr_names)}
    mutated = {o.name for o in ir.outputs} & set(ir.ir_input_names)
    args = []
    for i in ir.inputs:
        kind = {"required": "Tensor", "optional": "Tensor?", "dynamic": "Tensor[]"}[i.kind]
        if i.name in mutated:
            kind = "Tensor(a!)" if i.kind == "required" else _refuse(ir, i.name)
        if i.scalar is not None:
            kind = _scalar_kind(ir, i)
        elif i.value_depend and i.name not in mutated and _host_ints(op, i):
            kind = _host_kind(i)
        args.append(f"{kind} {torch_names[i.name]}")
    counted = cann.counts(ir)
    attrs = [a for a in ir.attrs if a.name not in counted]
    keyword = _first_keyword(attrs)
    for k, a in enumerate(attrs):
        row = types.BY_VALUE_TYPE["VT_DATA_TYPE" if a.dtype else a.type]  # a dtype: ScalarType
        default = "" if a.default is None else f"={_schema_value(a.default, row)}"
        args += ["*"] if k == keyword else []
        args.append(f"{row.schema} {torch_names[a.name]}{default}")
    fresh = [o for o in ir.outputs if o.name not in mutated]
    rets = [f"{'Tensor[]' if o.kind == 'dynamic' else 'Tensor'} {_py_name(o.name)}" for o in fresh]
    returns = rets[0].split()[0] if len(rets) == 1 else f"({', '.join(rets)})"
    arg_names = {t: c for c, t in torch_names.items() if t != c}
    return TorchSide(
        f"({', '.join(args)}) -> {returns}",
        replace(ir, arg_names=arg_names),
        op,
    )


def _first_keyword(attrs) -> int | None:
    """Attrs follow the tensors positionally, as torch_npu's schemas take them; from a
    default that a required attr follows (CANN's order allows it, a positional torch
    schema does not) they are keyword-only."""
    required = [k for k, a in enumerate(attrs) if a.default is None]
    return next(
        (k for k, a in enumerate(attrs) if a.default is not None and k < max(required, default=-1)),
        None,
    )


def _refuse(ir: IrDef, name: str):
    raise SpecError(f"{ir.op_type}: input {name!r} is written in place but not required")


def _scalar_kind(ir: IrDef, tensor) -> str:
    """A ``.Scalar()`` input is a torch ``Scalar``, a ``.ScalarList()`` one a ``Scalar[]``:
    opsdk's converter passes either as the GE host input of its name
    (``opsdk.converters.scalar_input``: int64 or float, a list as one 1-D input, as
    TorchAir's own foreach converters pass a ``Scalar[]``)."""
    if tensor.kind == "dynamic":
        raise SpecError(
            f"{ir.op_type}: input {tensor.name!r} is a dynamic Scalar: a list of scalar "
            "inputs has no torch type opsdk can convert; write the op's torch side by hand"
        )
    kind = "Scalar[]" if tensor.scalar == "scalar_list" else "Scalar"
    return f"{kind}?" if tensor.kind == "optional" else kind


# A value input named like one number (an axis, a count, ``k``): a SymInt; others
# (``size_splits``, ``paddings``, ``size``) are lists.
_ONE_NUMBER = re.compile(r"(?:\w+_)?(?:axis|dim|k|n|num|count|index)")
_INTEGERS = frozenset(f"DT_{u}INT{bits}" for u in ("", "U") for bits in (8, 16, 32, 64))


def _host_ints(op: cann.CannOp, tensor) -> bool:
    """Whether a ValueDepend input holds integers only (an axis, sizes, paddings): CANN
    reads its value on the host, as torch_npu's schemas take such values as ints. A float
    or mixed one (PadV3's ``constant_values``) stays a tensor."""
    if tensor.kind == "dynamic":
        return False
    declared = set(op.dtypes.get(tensor.name, ()))
    return bool(declared) and declared <= _INTEGERS


def _host_kind(tensor) -> str:
    """The host argument of an integer ValueDepend input: ``SymInt`` when its name says one
    number, else ``SymInt[]`` (the converter feeds GE the value as an int tensor, the
    aclnn call an aclIntArray)."""
    kind = "SymInt" if _ONE_NUMBER.fullmatch(tensor.name) else "SymInt[]"
    return f"{kind}?" if tensor.kind == "optional" else kind


def _py_name(name: str) -> str:
    """A CANN name as a torch argument: keywords get a trailing underscore."""
    return f"{name}_" if keyword.iskeyword(name) else name


def _schema_value(value, row: types.SchemaType) -> str:
    """A default in torch's schema language; a Type attr's GE value as a torch dtype name."""
    if row.schema == "ScalarType":
        dt = types.BY_GE_VALUE.get(value)
        if dt is None or not dt.torch:
            raise SpecError(f"data type {value} (GE) has no torch dtype for a ScalarType default")
        return dt.torch
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_schema_value(v, row) for v in value) + "]"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return repr(value).replace("'", '"') if '"' not in value else repr(value)
    return repr(value)
