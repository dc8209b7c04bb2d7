"""The data types an op's tensors take in its declared cases: what its CANN exports declare.

:func:`model` is the op as CANN's formats are told about it (:mod:`opsdk.cann.exports`).

The inputs' come from the cases ``opsdk check`` runs (``specs.py``, else its default
float32 case); the outputs' from the op's fake function on those inputs, so a float
op's int index output or int64 host scalar reaches the prototype as what it is.
"""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._pytree import tree_map

from opsdk._runtime import spec, types
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp
from opsdk.errors import OpsdkError, SpecError
from opsdk.harness.variants.cases import cases


def model(ir: IrDef) -> CannOp:
    """The op as CANN is told about it: its IR and, per tensor, the data types the
    declared specs feed it (one column per case; host scalars are int64 or float)."""
    found = columns(ir)
    dtypes = {n: tuple(col[n] for col in found) for n in ir.tensor_names}
    formats = {name: ("ND",) * len(dts) for name, dts in dtypes.items()}
    return CannOp(ir, dtypes, formats)


def columns(ir: IrDef) -> list[dict[str, str]]:
    """One ``{tensor name: GE enumerator}`` per distinct case of the op ``ir`` stands for."""
    if ir.torch_op is None:
        raise SpecError(f"{ir.op_type}: its IrDef names no torch_op: name the op it lowers")
    op = spec.resolve(ir.torch_op)
    op_spec = spec.of(op)
    torch_arg = {ir.ir_name(a.name): a.name for a in op_spec.args}
    written = {ir.ir_name(a.name) for a in op_spec.mutated_args}
    found: list[dict] = []
    for case in cases(op_spec, "static", "eager"):
        call = case.calls[0]
        values = op_spec.by_name(call.args, call.kwargs)
        column = {i.name: _ge(values.get(torch_arg.get(i.name, i.name))) for i in ir.inputs}
        fresh = iter(_fake_outputs(op, call))
        for o in ir.outputs:
            column[o.name] = column[o.name] if o.name in written else _ge(next(fresh, None))
        if column not in found:
            found.append(column)
    for column in found:  # an absent optional input: its type in another case, else float
        for name, dt in column.items():
            if dt is None:
                column[name] = next((c[name] for c in found if c[name]), "DT_FLOAT")
    # a case that gives the optional input may now be one of those that did not
    return [c for i, c in enumerate(found) if c not in found[:i]]


def _fake_outputs(op, call) -> list:
    """The op's outputs on fake copies of the call's inputs (its fake function)."""
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        args, kwargs = tree_map(
            lambda v: mode.from_tensor(v) if isinstance(v, torch.Tensor) else v,
            (call.args, call.kwargs),
        )
        try:
            out = op(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - a skeleton's ImplementMe, or a bug in it
            first = f"{type(err).__name__}: {err}".splitlines()[0]
            raise OpsdkError(
                f"{op.name()}: opsdk ir takes the output data types from the fake function, "
                f"which raised {first}; `opsdk check` names its file and line"
            ) from None
    if out is None:
        return []
    return list(out) if isinstance(out, tuple) else [out]


def _ge(value) -> str | None:
    if isinstance(value, (list, tuple)):
        return _ge(value[0]) if value else None
    if isinstance(value, torch.Tensor):
        return types.known_dtype(str(value.dtype)).ge
    if isinstance(value, bool) or value is None:
        return None
    return "DT_INT64" if isinstance(value, int) else "DT_FLOAT"  # a host scalar input
