"""Check ``converter``: TorchAir lowers the op, and the GE graph agrees with CANN's
prototype and with the schema.

First, every schema argument binds to the converter's parameter of its name (positional
ones in order). The op's FX node then goes through the real TorchAir (``max-autotune``,
the GE column's backend) in ``static`` and ``dynamic`` mode, and the GE graph is taken
when TorchAir compiles it (nothing runs). Every node of a type whose ``REG_OP`` is known
feeds its required inputs, names its inputs in the prototype's order, carries every attr
it requires, each in the field of the prototype's type; the graph's inputs follow the
seed rules the ge column enforces (symbolic scalars reach the op as int64 host inputs);
in ``static`` mode, in each case, the Meta function's outputs are outputs of their GE node's REG_OP
of dtypes it supports with the node's inputs' (one row, each in its set, a shared
symbol's), and an argument left at its schema default reaches GE as that default (a
converter's Python default that differs from the schema's changes an attr).
What the REG_OP text cannot settle (it does not read, or TorchAir's generated GE API
builds inputs it lacks) is a note.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import torch
import torch._dynamo

from opsdk.audit.checks import Undecided, fake_outputs, first_call, where
from opsdk.errors import OpsdkError
from opsdk.harness.columns import ge
from opsdk.harness.failures import chain, first_line
from opsdk.harness.model import Cell, CellFailure, OpUnderTest
from opsdk.harness.variants.inputs import cases, mark_static
from opsdk.offline import patches
from opsdk.offline.ge.proto import decode_attr
from opsdk.offline.torchair import is_offline
from opsdk.runtime import spec, types

__all__ = ["check", "check_binding", "check_node", "check_outputs", "lower"]


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
            notes.append(f"case {case.label}: not lowered ({_why_not_lowered(err)})")
            continue
        ran += 1
        for node in concrete.graph.op:
            notes += check_node(library, node, audit_op)
        check_given_inputs(library, concrete.graph, audit_op, _bound(op_spec, call))
        ge.check_inputs(cell, concrete, case)
        if shapes == "static":  # every case: each may be another dtype row
            meta, _, _ = fake_outputs(audit_op.op, call)
            notes += check_outputs(library, audit_op, concrete.graph, meta)
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


def _why_not_lowered(err) -> str:
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
    for e in chain(err):
        tb = e.__traceback__
        while isinstance(e, TypeError) and tb is not None:
            code = tb.tb_frame.f_code
            if code.co_name == "setter" and Path(code.co_filename).match("torchair/ge/attr.py"):
                return True
            tb = tb.tb_next
    return False


def _bound(op_spec, call) -> dict:
    """The call's arguments by schema name."""
    positional = [a.name for a in op_spec.args if not a.kwarg_only]
    return dict(zip(positional, call.args, strict=False)) | call.kwargs


def check_given_inputs(library, graph, audit_op, bound: dict) -> None:
    """A tensor the call gives for an argument named as an optional input of a GE node's
    definition is fed to that input of some node: a converter that leaves it unfed
    drops what the caller gave (a ``None`` left out is right)."""
    given = {
        name
        for name, value in bound.items()
        if isinstance(value, torch.Tensor) or (isinstance(value, list) and value)
    }
    declaring, fed = {}, set()
    for node in graph.op:
        try:
            cann_op = library.reg_op(node.type)
        except OpsdkError:
            continue
        if cann_op is None:
            continue
        optional = {i.name for i in cann_op.ir.inputs if i.kind == "optional"}
        data = [i for i in node.input if not i.endswith(":-1")]
        names = [_base(d.name, cann_op.ir) for d in node.input_desc][: len(data)]
        fed |= {n for n, i in zip(names, data, strict=False) if i}
        for name in given & optional:
            declaring.setdefault(name, node)
    for name, node in declaring.items():
        if name not in fed:
            raise CellFailure(
                "converter",
                f"the call gives {name}, an optional input of GE node {node.name} "
                f"({node.type}) in {library.definition(node.type)}, and no GE node is fed "
                f"it: the converter{where(audit_op.converter)} drops it; feed it when it is "
                "not None",
            )


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
        return [f"{library.definition(node.type)} does not read ({err})"]
    if cann_op is None:
        return []
    ir, at = cann_op.ir, f"GE node {node.name} ({node.type}) of {audit_op.qualname}"
    defined = library.definition(node.type)
    data = [i for i in node.input if not i.endswith(":-1")]
    names = [_base(d.name, ir) for d in node.input_desc][: len(data)]
    unknown = [n for n in names if n not in ir.ir_input_names]
    if unknown:  # TorchAir's GE API builds inputs its own REG_OP text lacks
        return [
            f"{at} has inputs {unknown} that {defined} lacks: the GE API that built the node "
            "and that definition disagree, which one CANN has cannot be decided offline"
        ]
    fed = [n for n, i in zip(names, data, strict=False) if i]  # in the node's order
    required = [i.name for i in ir.inputs if i.kind == "required"]
    order = [ir.ir_input_names.index(n) for n in names]
    if [r for r in required if r not in fed] or order != sorted(order):
        raise CellFailure(
            "converter",
            f"{at} has inputs {names} (fed: {fed}); {defined} declares "
            f"{list(ir.ir_input_names)} in that order (required: {required}): fix the "
            f"converter{where(audit_op.converter)}",
        )
    missing = [a.name for a in ir.attrs if a.default is None and a.name not in node.attr]
    if missing:
        raise CellFailure(
            "converter",
            f"{at} lacks attrs {missing}, which {defined} requires: set them in the "
            f"converter{where(audit_op.converter)}",
        )
    for a in ir.attrs:
        if a.name not in node.attr:
            continue
        row = types.BY_VALUE_TYPE[a.type]
        seen = node.attr[a.name].WhichOneof("value")
        expected = row.attr_field
        if expected and seen != expected and not (seen == "list" and expected.startswith("list")):
            raise CellFailure(
                "converter",
                f"{at}: attr {a.name} is {row.reg_op} in {defined} but the node carries a "
                f"'{seen}' value ({decode_attr(node.attr[a.name])!r}): build it with "
                f"ge.attr.{row.ge_attr} in the converter{where(audit_op.converter)}",
            )
    return []


def check_outputs(library, audit_op, graph, meta) -> list[str]:
    """Each of the Meta function's outputs is an output its GE node's REG_OP declares,
    of a dtype the op supports with the dtypes the node's inputs are fed: one of the rows
    they match (msopgen JSON, OpDef), else in its own set and, sharing a ``DATATYPE``
    symbol with a fed input, of that input's dtype. Inputs the op does not take put the
    case outside its types: not checked. The graph's outputs are the op's in order (an
    op that writes an input has more: not checked); a node without a readable REG_OP, or
    with dynamic outputs, is not checked, nor a dtype torch_npu carries in another
    (uint8 for hifloat8). Returns notes: inputs outside every row the definition
    declares leave the dtypes unchecked."""
    outs = meta if isinstance(meta, tuple) else (meta,)
    schema = audit_op.op._schema
    written = any(a.alias_info and a.alias_info.is_write for a in schema.arguments)
    net = [n for n in graph.op if n.type == "NetOutput"]
    if written or len(net) != 1 or not all(isinstance(t, torch.Tensor) for t in outs):
        return []
    refs = [i for i in net[0].input if not i.endswith(":-1")]
    nodes = {n.name: n for n in graph.op}
    seen = {}  # node name -> (node, its CannOp, {output name: (i, torch dtype, GE dtype)})
    for i, (ref, out) in enumerate(zip(refs, outs, strict=False) if len(refs) == len(outs) else ()):
        name, _, index = ref.rpartition(":")
        node = nodes.get(name)
        try:
            cann_op = library.reg_op(node.type) if node is not None else None
        except OpsdkError:
            continue
        if cann_op is None or any(o.kind == "dynamic" for o in cann_op.ir.outputs):
            continue
        declared = cann_op.ir.outputs
        if int(index) >= len(declared):
            raise CellFailure(
                "converter",
                f"the op's output {i} is output {index} of GE node {node.name} ({node.type}); "
                f"{library.definition(node.type)} declares {len(declared)} "
                f"({[o.name for o in declared]}): the converter{where(audit_op.converter)} "
                "returns more outputs than the GE op has",
            )
        row = types.dtype(str(out.dtype))
        if row is not None and row.torch not in ("uint8", "int8"):  # else carried: unchecked
            outputs = seen.setdefault(name, (node, cann_op, {}))[2]
            outputs[declared[int(index)].name] = (i, out.dtype, row.ge)
    notes = []
    for node, cann_op, outputs in seen.values():
        check = _check_rows if cann_op.rows else _check_sets
        notes += check(audit_op, node, cann_op, outputs, library.definition(node.type))
    return notes


def _check_rows(audit_op, node, cann_op, outputs, defined: str) -> list[str]:
    """The outputs' dtypes are one row with the fed inputs' (lists of unequal lengths are
    no rows to read: not checked)."""
    lists = {n: d for n, d in cann_op.dtypes.items() if d}  # () is any dtype
    widths = {len(d) for d in lists.values()}
    if len(widths) != 1:
        return []
    fed = _fed(cann_op, node)
    rows = [
        r for r in range(widths.pop()) if all(n not in lists or lists[n][r] == d for n, d in fed)
    ]
    if not rows:  # outside the op's types
        return [
            f"GE node {node.name} ({node.type}) is fed {_said(fed)}, no row {defined} "
            "declares: its output dtypes are not checked (declare a case of a declared row)"
        ]
    if any(all(n not in lists or lists[n][r] == o[2] for n, o in outputs.items()) for r in rows):
        return []
    said = ", ".join(f"output {i} ({n}) {dtype}" for n, (i, dtype, _) in outputs.items())
    allowed = " or ".join(
        "(" + ", ".join(f"{n} {lists[n][r]}" for n in outputs if n in lists) + ")" for r in rows
    )
    raise CellFailure(
        "converter",
        f"the Meta function{where(audit_op.meta)} gives {said} of GE node {node.name} "
        f"({node.type}); fed {_said(fed)}, {defined} "
        f"supports only {allowed}: fix the Meta function's dtypes (or the converter's "
        "mapping)",
    )


def _check_sets(audit_op, node, cann_op, outputs, defined: str) -> list[str]:
    """Each output's dtype is in its own set, and is the dtype of the fed inputs sharing
    its ``DATATYPE`` symbol (inputs of different dtypes there: outside the op's types)."""
    fed = _fed(cann_op, node)
    if any(cann_op.dtypes.get(n) and d not in cann_op.dtypes[n] for n, d in fed):
        return []  # an input the op does not take: outside its types
    at = f"GE node {node.name} ({node.type})"
    for name, (i, dtype, got) in outputs.items():
        allowed = cann_op.dtypes.get(name, ())
        if allowed and got not in allowed:
            raise CellFailure(
                "converter",
                f"the Meta function{where(audit_op.meta)} gives output {i} dtype {dtype}; "
                f"it is {name} of {at}, which {defined} allows only as "
                f"{', '.join(dict.fromkeys(allowed))}: fix the Meta function's dtype (or the "
                "converter's mapping)",
            )
        symbol = cann_op.type_vars.get(name)
        linked = [(n, d) for n, d in fed if symbol and cann_op.type_vars.get(n) == symbol]
        if len({d for _, d in linked}) == 1 and linked[0][1] not in (None, got):
            raise CellFailure(
                "converter",
                f"the Meta function{where(audit_op.meta)} gives output {i} dtype {dtype}; "
                f"it is {name} of {at}; {defined} types it {symbol} as input "
                f"{linked[0][0]}, fed {linked[0][1]}: give it its input's dtype in the Meta "
                "function (or fix the converter's mapping)",
            )
    return []


def _said(fed) -> str:
    return ", ".join(f"{n} {d}" for n, d in fed)


def _fed(cann_op, node) -> list[tuple[str, str | None]]:
    """Each input the node is fed, by its REG_OP name, with its GE dtype (None: a number
    GE's enum does not name)."""
    data = [i for i in node.input if not i.endswith(":-1")]
    fed = []
    for ref, desc in zip(data, node.input_desc, strict=False):
        enum = desc.DESCRIPTOR.fields_by_name["dtype"].enum_type.values_by_number
        if ref:
            name = enum[desc.dtype].name if desc.dtype in enum else None
            fed.append((_base(desc.name, cann_op.ir), name))
    return fed


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


def _check_defaults(library, audit_op, op_spec, case) -> list[str]:
    """Each number or bool argument the schema gives a default reaches GE as that default.

    torch drops an argument equal to its schema default from the FX node, so the
    converter's own Python default applies. Which attr carries the argument is found by
    lowering again with another value: the one attr that changes, and takes that value.
    Other values are tried while one changes none (the converter's own default may be
    that very value). Then the attr's value with the argument at its default must be the
    schema's default. Returns notes: the arguments no other value lowered for."""
    call = first_call(case)
    bound = _bound(op_spec, call)
    notes = []
    lowered = lambda name, value: _attrs(  # noqa: E731
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
