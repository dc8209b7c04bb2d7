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
from opsdk.errors import OpsdkError
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
            if _in_converter(err, audit_op) and audit_op.origin == "declared":
                # a case TorchAir declares its converter supports (a derived one proves
                # nothing: the converter may refuse its dtypes or sizes by design)
                raise CellFailure(
                    "converter",
                    f"case {case.label}: the converter{where(audit_op.converter)} raised "
                    f"{first_line(_last(err))}",
                ) from err
            notes.append(f"case {case.label}: not lowered ({first_line(_last(err))})")
            continue
        ran += 1
        for node in concrete.graph.op:
            notes += check_node(library, node, audit_op)
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


def check_node(library, node, audit_op) -> list[str]:
    """One GE node against its type's ``REG_OP`` (none known: nothing to check); notes
    what cannot be decided."""
    try:
        cann_op = library.reg_op(node.type)
    except OpsdkError as err:  # TorchAir's text of it is malformed (.ATRR, a stray paren)
        return [f"REG_OP({node.type}) as TorchAir documents it does not read ({err})"]
    if cann_op is None:
        return []
    ir, at = cann_op.ir, f"GE node {node.name} ({node.type}) of {audit_op.qualname}"
    data = [i for i in node.input if not i.endswith(":-1")]
    names = [_base(d.name, ir) for d in node.input_desc][: len(data)]
    unknown = [n for n in names if n not in ir.ir_input_names]
    if unknown:  # TorchAir's GE API builds inputs its own REG_OP text lacks
        return [
            f"{at} has inputs {unknown} that the REG_OP TorchAir documents for {node.type} "
            "lacks: its generated GE API and that text disagree, which one CANN has cannot "
            "be decided offline"
        ]
    fed = {n for n, i in zip(names, data, strict=False) if i}
    required = [i.name for i in ir.inputs if i.kind == "required"]
    order = [ir.ir_input_names.index(n) for n in names]
    if [r for r in required if r not in fed] or order != sorted(order):
        raise CellFailure(
            "converter",
            f"{at} has inputs {names} (fed: {sorted(fed)}); its REG_OP declares "
            f"{list(ir.ir_input_names)} in that order (required: {required}): fix the "
            f"converter{where(audit_op.converter)}",
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
    return []


def _base(name: str, ir) -> str:
    """A dynamic input's instance ``x0``, ``x1`` is input ``x``."""
    stem = name.rstrip("0123456789")
    return stem if stem != name and stem in ir.ir_input_names else name


def _attrs(library, graph) -> list[tuple[str, dict]]:
    """The attrs of the nodes whose REG_OP is known and reads, in graph order."""
    found = []
    for node in graph.op:
        try:
            cann_op = library.reg_op(node.type)
        except OpsdkError:
            continue
        if cann_op is not None:
            names = set(cann_op.ir.ir_attr_names)
            found.append(
                (node.type, {k: decode_attr(v) for k, v in node.attr.items() if k in names})
            )
    return found


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
