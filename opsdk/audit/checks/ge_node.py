"""The converter check's half that reads a GE graph against CANN's definitions: each
node of a type whose definition is known (``Library.reg_op``: an ``--ir`` file, the
package's IR, TorchAir's ``REG_OP``) feeds its required inputs, in the definition's
order, and any optional one the call gives; carries every attr it requires, each in the
field of its type; and the Meta function's outputs are outputs of their node, of dtypes
the definition supports with the node's inputs' (one row, each in its set, a shared
symbol's). A definition that does not read, or a node with inputs it lacks, is a note.
"""

from __future__ import annotations

from typing import Any

import torch

from opsdk._runtime import types
from opsdk.audit.checks import where
from opsdk.errors import OpsdkError
from opsdk.harness.cell import CellFailure
from opsdk.offline.ge.proto import GRAPH_OPS, decode_attr, dtype_name

__all__ = ["attrs", "check_given_inputs", "check_node", "check_outputs"]


def _definition(library, node):
    """The node's type's CannOp, None when unknown or when its text does not read (which
    :func:`check_node` notes), or for the graph's own nodes."""
    if node.type in GRAPH_OPS:
        return None
    try:
        return library.reg_op(node.type)
    except OpsdkError:
        return None


def check_node(library, node, audit_op) -> list[str]:
    """One GE node against its type's ``REG_OP`` (none known: nothing to check); notes
    what cannot be decided."""
    if node.type in GRAPH_OPS:
        return []
    try:
        cann_op = library.reg_op(node.type)
    except OpsdkError as err:  # TorchAir's text of it is malformed (.ATRR, a stray paren)
        return [f"{library.definition(node.type)} does not read ({err})"]
    if cann_op is None:
        return []
    ir, at = cann_op.ir, f"GE node {node.name} ({node.type}) of {audit_op.qualname}"
    defined = library.definition(node.type)
    slots = _inputs(node, ir)
    names = [n for n, _, _ in slots]
    unknown = [n for n in names if n not in ir.ir_input_names]
    if unknown:  # TorchAir's GE API builds inputs its own REG_OP text lacks
        return [
            f"{at} has inputs {unknown} that {defined} lacks: the GE API that built the node "
            "and that definition disagree, which one CANN has cannot be decided offline"
        ]
    fed = [n for n, ref, _ in slots if ref]  # in the node's order
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


def check_given_inputs(library, graph, audit_op, bound: dict) -> None:
    """A tensor the call gives for an argument named as an optional input of a GE node's
    definition is fed to that input of some node: a converter that leaves it unfed
    drops what the caller gave (a ``None`` left out is right)."""
    given = {
        name
        for name, value in bound.items()
        if isinstance(value, torch.Tensor) or (isinstance(value, list) and value)
    }
    declaring: dict[str, Any] = {}  # an optional input's name -> a GE node declaring it
    fed: set[str] = set()
    for node in graph.op:
        cann_op = _definition(library, node)
        if cann_op is None:
            continue
        optional = {i.name for i in cann_op.ir.inputs if i.kind == "optional"}
        fed |= {n for n, ref, _ in _inputs(node, cann_op.ir) if ref}
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
    # node name -> (node, its CannOp, {output name: (i, torch dtype, GE dtype)})
    seen: dict[str, tuple[Any, Any, dict[str, tuple[int, torch.dtype, str]]]] = {}
    for i, (ref, out) in enumerate(zip(refs, outs, strict=False) if len(refs) == len(outs) else ()):
        name, _, index = ref.rpartition(":")
        node = nodes.get(name)
        cann_op = _definition(library, node) if node is not None else None
        if node is None or cann_op is None or any(o.kind == "dynamic" for o in cann_op.ir.outputs):
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
    """Each input the node is fed, by its definition's name, with its GE dtype (None: a
    number GE's enum does not name)."""
    return [(n, dtype_name(desc)) for n, ref, desc in _inputs(node, cann_op.ir) if ref]


def _inputs(node, ir) -> list[tuple[str, str, object]]:
    """The node's data input slots: the definition's name, the producer ("" when unfed)
    and the input's descriptor (control inputs, ``:-1``, are none)."""
    data = [i for i in node.input if not i.endswith(":-1")]
    return [
        (_base(desc.name, ir), ref, desc) for ref, desc in zip(data, node.input_desc, strict=False)
    ]


def _base(name: str, ir) -> str:
    """A dynamic input's instance ``x0``, ``x1`` is input ``x``."""
    stem = name.rstrip("0123456789")
    return stem if stem != name and stem in ir.ir_input_names else name


def attrs(library, graph) -> list[tuple[str, dict]]:
    """The attrs of the nodes whose definition is known and reads, in graph order."""
    found = []
    for node in graph.op:
        cann_op = _definition(library, node)
        if cann_op is not None:
            names = set(cann_op.ir.ir_attr_names)
            found.append(
                (node.type, {k: decode_attr(v) for k, v in node.attr.items() if k in names})
            )
    return found
