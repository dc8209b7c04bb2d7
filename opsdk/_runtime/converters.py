"""Helpers for TorchAir GE converters of custom ops.

Two jobs: map an op's schema onto its GE IR definition (which tensor argument
is which kind of IR input, which argument becomes which typed attr), and load
an op package's converter module once TorchAir is importable: offline that is
only after opsdk has located TorchAir and installed its native stand-in, so a
package cannot import ``torchair`` at its own import time.
"""

from __future__ import annotations

import functools
import importlib
import sys
from dataclasses import replace

from opsdk._runtime import types
from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk._runtime.spec import Arg, OpSchema, camel_case, of, resolve

__all__ = [
    "attr_builder",
    "bind",
    "ge_attr_args",
    "ge_input_args",
    "int32_input",
    "int64_input",
    "scalar_input",
    "ir_def_for",
    "ir_output_names",
    "load_converters",
    "load_pending",
]

_pending: list[str] = []


def attr_builder(arg: Arg) -> str:
    """Name of the ``torchair.ge.attr`` builder for a non-tensor argument."""
    row = types.row(arg.type)
    if row is None or row.ge_attr is None:
        raise ValueError(
            f"argument {arg.name!r} of type {arg.type} has no GE attr type; "
            "pass it as a Tensor or drop it from the converter"
        )
    return row.ge_attr


def ge_input_args(spec: OpSchema) -> tuple[Arg, ...]:
    """The arguments that are GE inputs: tensors, and symbolic scalars (``SymInt``,
    ``Scalar``, their lists) as host inputs, since a GE attr is a compile-time constant
    (see :func:`int64_input` and :func:`scalar_input`)."""
    return tuple(a for a in spec.args if a.is_tensor or a.is_symbolic)


def ge_attr_args(spec: OpSchema) -> tuple[Arg, ...]:
    """The arguments that are GE attrs: every other non-tensor argument."""
    return tuple(a for a in spec.args if not (a.is_tensor or a.is_symbolic))


def int64_input(value):
    """A SymInt or SymInt[] argument as the int64 GE input it is: a Const when the
    value is concrete, the (cast) host tensor TorchAir made of it when symbolic."""
    return _int_input(value, "DT_INT64")


def int32_input(value):
    """:func:`int64_input` for a GE input declared int32 only (a CANN ValueDepend input
    such as ResizeBilinearV2's ``size``): GE checks the type its definition declares."""
    return _int_input(value, "DT_INT32")


def _int_input(value, dtype: str):
    from torchair import ge

    wanted = getattr(ge.DataType, dtype)
    if value is None or (isinstance(value, ge.Tensor) and value.dtype == wanted):
        return value
    if isinstance(value, ge.Tensor):
        return ge.Cast(value, dst_type=wanted)
    return ge.Const(value, dtype=wanted)


def scalar_input(value):
    """A Scalar or Scalar[] argument as the GE input it is: a Const of its own type (int64
    when every value is an int, else float; a list as one 1-D Const, as TorchAir's foreach
    converters pass one) when concrete, the host tensor TorchAir made of it when symbolic."""
    from torchair import ge

    if value is None or isinstance(value, ge.Tensor):
        return value
    values = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, ge.Tensor) for v in values):
        raise TypeError(
            "a Scalar[] with a symbolic item has no GE input opsdk can make: declare the "
            "list's values in specs.py (Fixed([...])) so that they stay constants"
        )
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in values)
    return ge.Const(value, dtype=ge.DataType.DT_INT64 if ints else ge.DataType.DT_FLOAT)


def _input_kind(arg: Arg) -> str:
    if arg.is_tensor and arg.is_list:
        return "dynamic"
    return "optional" if arg.is_optional else "required"


def ir_output_names(spec: OpSchema) -> list[str]:
    """IR outputs in order: one per mutated input (same name), then one per new
    tensor returned (a returned mutated input is that input's output)."""
    names = [a.name for a in spec.mutated_args]
    taken = {a.name for a in spec.args}
    fresh = spec.fresh_returns
    for i, ret in enumerate(fresh):
        name = ret.name or ("out" if len(fresh) == 1 else f"out{i}")
        while name in taken:
            name += "_"
        taken.add(name)
        names.append(name)
    return names


def ir_def_for(spec: OpSchema) -> IrDef:
    """The GE IR definition an op's schema implies, by TorchAir's rules (what its
    automatic converter assumes): the op type is the torch name in CamelCase, inputs
    and attrs keep the torch names. ``opsdk new`` writes it into a new package's ir.py;
    every other reader asks the registry (:func:`opsdk._runtime.irdef.for_op`)."""
    outputs = tuple(
        Output(
            name,
            "dynamic" if i >= len(spec.mutated_args) and _is_list_return(spec, i) else "required",
        )
        for i, name in enumerate(ir_output_names(spec))
    )
    return IrDef(
        op_type=camel_case(spec.name),
        inputs=tuple(Input(a.name, _input_kind(a)) for a in ge_input_args(spec)),
        outputs=outputs,
        attrs=tuple(
            Attr(a.name, row.value_type, _ir_default(a) if a.has_default else None)
            for a in ge_attr_args(spec)
            if (row := types.row(a.type)) is not None and row.value_type
        ),
        torch_op=spec.qualname,
    )


def _ir_default(arg: Arg):
    """An argument's default as a GE attr holds it: a ScalarType as GE's data type value
    (torch numbers float 6, GE 0; GE's 6 is DT_INT16)."""
    if arg.default is None or types.base(arg.type) != "ScalarType":
        return arg.default
    return _ge_dtype_values()[arg.default]


@functools.cache
def _ge_dtype_values() -> dict[object, int]:
    """torch ScalarType number -> GE DataType value, through the dtype names (torch's
    schema parser numbers a ScalarType default: the only public way to its numbering)."""
    import torch

    values: dict[object, int] = {}  # keyed by a schema's default_value for the dtype
    for d in (d for d in types.DTYPES.values() if d.torch):
        try:
            arg = torch._C.parse_schema(f"f(ScalarType d={d.torch}) -> ()").arguments[0]
        except RuntimeError:  # no torch dtype, or one the schema language cannot name
            continue
        values[arg.default_value] = d.value
    return values


def bind(ir: IrDef, op, *, arg_names=None, fixed_args=None) -> IrDef:
    """``ir`` (CANN's names, e.g. from its ``REG_OP``) standing for the torch op ``op``
    (an ``OpOverload``, its ``ns::name`` or its ``OpSchema``): the same definition naming
    ``op`` as ``torch_op``, with every argument of ``op`` mapped to an IR input (tensors
    and symbolic scalars) or attr (the other arguments), except those in ``fixed_args``.
    Given ``arg_names`` come first, then same names, then what is left on both sides in
    order, when both sides have as many left (attrs of the same type)."""
    spec = op if isinstance(op, OpSchema) else of(resolve(op) if isinstance(op, str) else op)
    fixed = dict(fixed_args or {})
    names = dict(arg_names or {})
    for kind, given, ir_side in (
        ("input", ge_input_args(spec), ir.inputs),
        ("attr", ge_attr_args(spec), ir.attrs),
    ):
        args = [a for a in given if a.name not in fixed and a.name not in names]
        free = [x for x in ir_side if x.name not in names.values()]
        names.update({a.name: a.name for a in args if a.name in {x.name for x in free}})
        args = [a for a in args if a.name not in names]
        free = [x for x in free if x.name not in names.values()]
        if args and not _pairable(args, free):
            raise ValueError(
                f"{spec.qualname} -> {ir.op_type}: cannot tell which IR {kind} of "
                f"{[x.name for x in free]} each of {[a.name for a in args]} is; give "
                "arg_names={torch_arg: ir_name} (or fixed_args for an argument the converter "
                "consumes)"
            )
        if args:
            names.update({a.name: x.name for a, x in zip(args, free, strict=True)})
        unfed = [
            x.name
            for x in ir_side
            if getattr(x, "kind", None) == "required" and x.name not in names.values()
        ]
        if unfed:
            raise ValueError(
                f"{spec.qualname} -> {ir.op_type}: no argument feeds the required IR input(s) "
                f"{unfed}; map one to it with arg_names"
            )
    return replace(
        ir,
        torch_op=spec.qualname,
        arg_names=tuple((a, n) for a, n in names.items() if a != n),
        fixed_args=tuple(fixed.items()),
    )


def _pairable(args, free) -> bool:
    """Torch arguments and IR inputs or attrs left over pair in order: as many on both
    sides, and each attr of the type its argument has."""
    if len(args) != len(free):
        return False
    return all(
        not isinstance(x, Attr) or getattr(types.row(a.type), "value_type", None) == x.type
        for a, x in zip(args, free, strict=True)
    )


def _is_list_return(spec: OpSchema, output_index: int) -> bool:
    return spec.fresh_returns[output_index - len(spec.mutated_args)].type.endswith("[]")


def load_converters(module_name: str) -> None:
    """Import ``module_name`` (an op package's converter) now if TorchAir is
    already imported (a real NPU host imports it with torch_npu), else when
    opsdk imports TorchAir (see :func:`load_pending`)."""
    if "torchair" in sys.modules:
        importlib.import_module(module_name)
    elif module_name not in _pending:
        _pending.append(module_name)


def load_pending() -> None:
    """Import every converter module that waited for TorchAir."""
    while _pending:
        importlib.import_module(_pending.pop(0))
