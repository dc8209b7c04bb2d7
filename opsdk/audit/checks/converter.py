"""Check ``converter``: TorchAir lowers the op, and the GE graph agrees with CANN's
definitions and with the schema.

First, every schema argument binds to the converter's parameter of its name (positional
ones in order). The op's FX node then goes through the real TorchAir (``max-autotune``,
the GE column's backend) in ``static`` and ``dynamic`` mode, and the GE graph is taken
when TorchAir compiles it (nothing runs). Its nodes are read against their definitions
(:mod:`opsdk.audit.checks.ge_node`); its inputs follow the seed rules the ge column
enforces (symbolic scalars reach the op as int64 host inputs); in ``static`` mode an
argument left at its schema default reaches GE as that default (a converter's Python
default that differs from the schema's changes an attr). A converter raising is a
finding on a case it declares, or when it builds an attr of a value its type cannot hold.
"""

from __future__ import annotations

import inspect
import re
import traceback
from pathlib import Path

import torch
import torch._dynamo

from opsdk._runtime import patches, spec
from opsdk.audit.checks import Undecided, fake_outputs, first_call, ge_node, where
from opsdk.harness.cell import Cell, CellFailure, OpUnderTest
from opsdk.harness.columns import ge
from opsdk.harness.core import ge_backend
from opsdk.harness.failures import chain, first_line
from opsdk.harness.variants.cases import cases, mark_static
from opsdk.offline.torchair import is_offline

__all__ = ["check", "check_binding", "lower", "why_not_lowered"]


class _Lowered(Exception):
    """Raised once TorchAir built the GE graph, before GE loads it: the audit runs nothing."""


def lower(op, call, shapes: str):
    """The ``GeConcreteGraph`` TorchAir builds for ``op`` on ``call`` in ``shapes`` mode."""
    graphs = []

    def stop(graph):
        graphs.append(graph)
        raise _Lowered

    torch._dynamo.reset()
    mark_static(call, shapes)
    compiled = torch.compile(
        lambda *a, **k: op(*a, **k),
        backend=ge_backend.backend(),
        dynamic=shapes != "static",
        fullgraph=True,
    )
    with patches.ge_first_run_hooked(stop):
        try:
            compiled(*call.args, **call.kwargs)
        except Exception as err:  # noqa: BLE001 - _Lowered, or the lowering's own failure
            if not graphs:
                raise
            if not any(isinstance(e, _Lowered) for e in chain(err)):
                raise
    return graphs[-1]


def check(library, audit_op, shapes: str) -> list[str]:
    if shapes == "static":
        check_binding(audit_op)
    if not audit_op.cases:
        raise Undecided(audit_op.no_case)
    op_spec = spec.of(audit_op.op)
    cell = Cell(OpUnderTest(op_spec, library.name), "ge", shapes)
    notes, ran = [], 0
    for index, case in enumerate(cases(op_spec, shapes, "ge")):
        call = first_call(case)
        try:
            concrete = lower(audit_op.op, call, shapes)
        except Exception as err:  # noqa: BLE001
            attr = _attr_refused(err)
            if _in_converter(err, audit_op) and (audit_op.origin == "declared" or attr):
                # a case TorchAir declares its converter supports (a derived one proves
                # nothing: the converter may refuse its dtypes or sizes by design), or an
                # attr built of a value its type cannot hold (never a refusal by design)
                fix = ": build the attr as the argument's type (ge.attr.Float for a float)"
                raise CellFailure(
                    "converter",
                    f"case {case.label}: the converter{where(audit_op.converter)} raised "
                    f"{first_line(_last(err))}" + (f" setting a GE attr{fix}" if attr else ""),
                ) from err
            notes.append(f"case {case.label}: not lowered ({why_not_lowered(err)})")
            continue
        ran += 1
        for node in concrete.graph.op:
            notes += ge_node.check_node(library, node, audit_op)
        given = op_spec.by_name(call.args, call.kwargs)
        ge_node.check_given_inputs(library, concrete.graph, audit_op, given)
        ge.check_inputs(cell, concrete, case)
        if shapes == "static":  # every case: each may be another dtype row
            meta, _, _ = fake_outputs(audit_op.op, call)
            notes += ge_node.check_outputs(library, audit_op, concrete.graph, meta)
        if shapes == "static" and index == 0:
            notes += _check_defaults(library, audit_op, op_spec, case)
    if not ran:
        raise Undecided("; ".join(notes))
    return notes


def check_binding(audit_op) -> None:
    """Every schema argument binds to the converter's parameter of its name: TorchAir
    calls the converter with the FX node's args (the schema's positional arguments, in
    order) and kwargs (its keyword-only ones); an in-place op's with every argument by
    name (auto_functionalized_v2)."""
    converter = getattr(audit_op.op, "_ge_converter", None)
    if converter is None:
        return
    params = inspect.signature(converter).parameters.values()
    kinds = {p.kind for p in params}
    positional = [  # TorchAir passes meta_outputs by name
        p.name
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "meta_outputs"
    ]
    named = {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
    at = f"the converter{where(audit_op.converter)} of {audit_op.qualname}"
    schema = audit_op.op._schema
    for i, arg in enumerate(a for a in schema.arguments if not a.kwarg_only):
        if i >= len(positional) and inspect.Parameter.VAR_POSITIONAL not in kinds:
            raise CellFailure(
                "converter",
                f"{at} takes {len(positional)} positional parameters; the schema passes "
                f"{arg.name} as positional argument {i}: add the parameter",
            )
        if i < len(positional) and positional[i] != arg.name and arg.name in positional:
            raise CellFailure(
                "converter",
                f"{at} receives positional argument {i} ({arg.name} in the schema) as "
                f"{positional[i]}; {arg.name} is its parameter {positional.index(arg.name)}: "
                "order the parameters as the schema does",
            )
    written = any(a.alias_info and a.alias_info.is_write for a in schema.arguments)
    if written and inspect.Parameter.VAR_KEYWORD not in kinds:
        missing = [a.name for a in schema.arguments if a.name not in named]
        if missing:  # TorchAir's auto_functionalized_v2 converter: _mutable_op_converter(**kw)
            raise CellFailure(
                "converter",
                f"{at} has no parameter {', '.join(missing)}: TorchAir converts the in-place "
                "op through auto_functionalized_v2, which passes every argument by its "
                "schema name; name the parameters as the schema does",
            )
    for arg in (a for a in schema.arguments if a.kwarg_only):
        if arg.name not in named and inspect.Parameter.VAR_KEYWORD not in kinds:
            raise CellFailure(
                "converter",
                f"{at} has no parameter {arg.name}, a keyword-only argument of the schema: "
                "a call passing it fails to convert; add the parameter",
            )


# TorchAir's ge.custom_op on an op type GE has no definition of (ConverterErrorMsg)
_UNREGISTERED = re.compile(r"No AscendIR (\w+) was found to be registered")


def why_not_lowered(err) -> str:
    """TorchAir's first line, with the fix when GE does not know the op type: offline,
    GE knows one from its CANN definition (on an NPU host, from the installed op)."""
    said = first_line(_last(err))
    unknown = _UNREGISTERED.search(said)
    if unknown and is_offline():
        return (
            f"GE has no definition of {unknown.group(1)} offline: give its CANN definition "
            "with --ir (a REG_OP header, its op_host OpDef source or msopgen JSON)"
        )
    return said


def _attr_refused(err) -> bool:
    """The lowering failed with a TypeError setting a GE attr (``ge.attr.Int(1e-06)``):
    TorchAir's attr setter takes the value as the converter built it."""
    return any(
        frame.name == "setter" and Path(frame.filename).match("torchair/ge/attr.py")
        for e in chain(err)
        if isinstance(e, TypeError)
        for frame in traceback.extract_tb(e.__traceback__)
    )


def _last(err):
    *_, last = chain(err)
    return last


def _in_converter(err, audit_op) -> bool:
    """The lowering failed with a frame of the op's converter file on the stack."""
    path = audit_op.converter.path if audit_op.converter else None
    return path is not None and any(
        frame.filename == path
        for e in chain(err)
        for frame in traceback.extract_tb(e.__traceback__)
    )


def _check_defaults(library, audit_op, op_spec, case) -> list[str]:
    """Each number or bool argument the schema gives a default reaches GE as that default.

    torch drops an argument equal to its schema default from the FX node, so the
    converter's own Python default applies. Which attr carries the argument is found by
    lowering again with another value: the one attr that changes, and takes that value.
    Other values are tried while one changes none (the converter's own default may be
    that very value). Then the attr's value with the argument at its default must be the
    schema's default. Returns notes: the arguments no other value lowered for."""
    call = first_call(case)
    bound = op_spec.by_name(call.args, call.kwargs)
    notes = []
    lowered = lambda name, value: ge_node.attrs(  # noqa: E731
        library, lower(audit_op.op, type(call)([], bound | {name: value}), "static").graph
    )
    for arg in op_spec.args:
        others = _others(arg.default) if arg.has_default and not arg.is_tensor else ()
        if not others:
            continue
        try:
            base = lowered(arg.name, arg.default)
        except Exception:  # noqa: BLE001 - a value the op does not take here
            continue
        carriers, other = _carriers(base, lowered, arg.name, others)
        if other is _NONE_LOWERED:
            notes.append(
                f"case {case.label}: no value of {arg.name} but its default "
                f"({', '.join(map(repr, others))} tried) lowers: its default is not checked"
            )
            continue
        if len(carriers) != 1:
            continue  # none carries it as it is (the converter maps it), or several
        [(op_type, name, seen)] = carriers
        if not _same(seen, arg.default):
            raise CellFailure(
                "converter",
                f"case {case.label}: {arg.name} at its schema default {arg.default!r} reaches "
                f"GE as {op_type} attr {name}={_shown(seen)} ({arg.name}={other!r} gives "
                f"{name}={other!r}): torch leaves an argument equal to its default out of the "
                f"FX node, so the converter's{where(audit_op.converter)} Python default "
                "applies; make it the schema's",
            )
    return notes


_NONE_LOWERED = object()  # _carriers' value when no other value lowered


def _carriers(base, lowered, arg: str, others) -> tuple[list, object]:
    """The attrs (``(op_type, name, value at the default)``) that change to the value, for
    the first of ``others`` given as ``arg`` that changes any, and that value; ``[]`` when
    none does (and :data:`_NONE_LOWERED` when none lowered)."""
    tried = False
    for other in others:
        try:
            changed = lowered(arg, other)
        except Exception:  # noqa: BLE001 - a value the op does not take here
            continue
        tried = True
        found = [
            (op_type, name, a[name])
            for (op_type, a), (_, b) in zip(base, changed, strict=False)
            for name in a.keys() & b.keys()
            if a[name] != b[name] and _same(b[name], other)
        ]
        if found:
            return found, other
    return [], None if tried else _NONE_LOWERED


def _others(default) -> tuple:
    """Other values of the default's type (a bool has one), () when none can be picked
    safely; an int's both ways (a dim's -1 takes -2, not 1, in a one-dim case)."""
    if isinstance(default, bool):
        return (not default,)
    if isinstance(default, float):
        return (default * 2, default * 3) if default else (0.5, 0.25)
    if isinstance(default, int):
        return (default + 1, default - 1, default + 2)
    return ()


def _shown(value) -> str:
    """An attr value as GE holds it: a float32 to its 7 significant digits."""
    return repr(float(f"{value:.7g}")) if isinstance(value, float) else repr(value)


def _same(seen, value) -> bool:
    """An attr value equals an argument (GE floats are float32)."""
    if isinstance(value, float) and isinstance(seen, float):
        return abs(seen - value) <= 1e-6 * max(abs(value), 1e-30)
    return seen == value and type(seen) is type(value)
