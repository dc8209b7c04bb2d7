"""Check ``converter``: TorchAir lowers the op, and the GE graph agrees with CANN's
prototype and with the schema.

The op's FX node goes through the real TorchAir (``max-autotune``, the GE column's
backend) in ``static`` and ``dynamic`` mode, and the GE graph is taken when TorchAir
compiles it (nothing runs). Then: every node of a type whose ``REG_OP`` is known has at
least the prototype's required inputs, no more inputs than it declares, every attr it
requires, and each attr in the field of the prototype's type; the graph's inputs follow
the seed rules the ge column enforces (symbolic scalars reach the op as int64 host
inputs); and, in ``static`` mode, arguments left at their schema default lower to the
same GE graph as the schema's default passed explicitly (a converter's Python default
that differs from the schema's changes an attr).
"""

from __future__ import annotations

import torch
import torch._dynamo

from opsdk.audit.checks import Undecided, first_call, where
from opsdk.harness.columns import ge
from opsdk.harness.failures import chain, first_line
from opsdk.harness.model import Cell, CellFailure, OpUnderTest
from opsdk.harness.variants.inputs import cases, mark_static
from opsdk.offline import patches
from opsdk.offline.ge.proto import decode_attr
from opsdk.runtime import spec, types

__all__ = ["check", "check_node", "lower"]


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
        backend=ge.backend(),
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
            if _in_converter(err, audit_op):
                raise CellFailure(
                    "converter",
                    f"case {case.label}: the converter{where(audit_op.converter)} raised "
                    f"{first_line(_last(err))}",
                ) from err
            notes.append(f"case {case.label}: not lowered ({first_line(_last(err))})")
            continue
        ran += 1
        for node in concrete.graph.op:
            check_node(library, node, audit_op)
        ge.check_inputs(cell, concrete, case)
        if shapes == "static" and index == 0:
            _check_defaults(library, audit_op, op_spec, case)
    if not ran:
        raise Undecided("; ".join(notes))
    return notes


def _last(err):
    *_, last = chain(err)
    return last


def _in_converter(err, audit_op) -> bool:
    """The lowering failed with a frame of the op's converter file on the stack."""
    path = audit_op.converter.path if audit_op.converter else None
    for e in chain(err):
        tb = e.__traceback__
        while tb is not None:
            if path and tb.tb_frame.f_code.co_filename == path:
                return True
            tb = tb.tb_next
    return False


def check_node(library, node, audit_op) -> None:
    """One GE node against its type's ``REG_OP`` (none known: nothing to check)."""
    cann_op = library.reg_op(node.type)
    if cann_op is None:
        return
    ir, at = cann_op.ir, f"GE node {node.name} ({node.type}) of {audit_op.qualname}"
    data = [i for i in node.input if not i.endswith(":-1")]
    required = [i.name for i in ir.inputs if i.kind == "required"]
    dynamic = any(i.kind == "dynamic" for i in ir.inputs)
    if len(data) < len(required) or (not dynamic and len(data) > len(ir.inputs)):
        raise CellFailure(
            "converter",
            f"{at} has {len(data)} inputs; its REG_OP declares {list(ir.ir_input_names)} "
            f"(required: {required}): fix the converter{where(audit_op.converter)}",
        )
    missing = [a.name for a in ir.attrs if a.default is None and a.name not in node.attr]
    if missing:
        raise CellFailure(
            "converter",
            f"{at} lacks attrs {missing}, which its REG_OP requires: set them in the "
            f"converter{where(audit_op.converter)}",
        )
    for a in ir.attrs:
        if a.name not in node.attr:
            continue
        expected = types.BY_VALUE_TYPE[a.type].attr_field
        seen = node.attr[a.name].WhichOneof("value")
        if expected and seen != expected and not (seen == "list" and expected.startswith("list")):
            raise CellFailure(
                "converter",
                f"{at}: attr {a.name} is {a.type} in its REG_OP but the node carries a "
                f"'{seen}' value ({decode_attr(node.attr[a.name])!r}): pass it as "
                f"{a.type} in the converter{where(audit_op.converter)}",
            )


def _attrs(library, graph) -> list[tuple[str, dict]]:
    """The attrs of the nodes whose REG_OP is known, in graph order."""
    return [
        (n.type, {k: decode_attr(v) for k, v in n.attr.items() if k in _ir_attrs(library, n)})
        for n in graph.op
        if library.reg_op(n.type) is not None
    ]


def _ir_attrs(library, node) -> set[str]:
    return set(library.reg_op(node.type).ir.ir_attr_names)


def _check_defaults(library, audit_op, op_spec, case) -> None:
    """Each number or bool argument the schema gives a default reaches GE as that default.

    torch drops an argument equal to its schema default from the FX node, so the
    converter's own Python default applies. Which attr carries the argument is found by
    lowering again with another value: the one attr that changes, and takes that value.
    Then its value with the argument at its default must be the schema's default."""
    call = first_call(case)
    positional = [a.name for a in op_spec.args if not a.kwarg_only]
    bound = dict(zip(positional, call.args, strict=False)) | call.kwargs
    for arg in op_spec.args:
        other = _other(arg.default) if arg.has_default and not arg.is_tensor else None
        if other is None:
            continue
        try:
            at_default = lower(
                audit_op.op, type(call)([], bound | {arg.name: arg.default}), "static"
            )
            changed = lower(audit_op.op, type(call)([], bound | {arg.name: other}), "static")
        except Exception:  # noqa: BLE001 - a value the op does not take here
            continue
        base = _attrs(library, at_default.graph)
        carriers = [
            (op_type, name, a[name])
            for (op_type, a), (_, b) in zip(base, _attrs(library, changed.graph), strict=False)
            for name in a.keys() & b.keys()
            if a[name] != b[name] and _same(b[name], other)
        ]
        if len(carriers) != 1:
            continue  # no attr carries it as it is (the converter maps it): undecidable
        [(op_type, name, seen)] = carriers
        if not _same(seen, arg.default):
            raise CellFailure(
                "converter",
                f"case {case.label}: {arg.name} at its schema default {arg.default!r} reaches "
                f"GE as {op_type} attr {name}={seen!r} ({arg.name}={other!r} gives "
                f"{name}={other!r}): torch leaves an argument equal to its default out of the "
                f"FX node, so the converter's{where(audit_op.converter)} Python default "
                "applies; make it the schema's",
            )


def _other(default):
    """Another value of the default's type, or None when none can be picked safely."""
    if isinstance(default, bool):
        return not default
    if isinstance(default, float):
        return default * 2 if default else 0.5
    if isinstance(default, int):
        return default + 1
    return None


def _same(seen, value) -> bool:
    """An attr value equals an argument (GE floats are float32)."""
    if isinstance(value, float) and isinstance(seen, float):
        return abs(seen - value) <= 1e-6 * max(abs(value), 1e-30)
    return seen == value and type(seen) is type(value)
