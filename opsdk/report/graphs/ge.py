"""A GE graph (TorchAir's ``GraphDef``, as a ``ModelDef`` carries it to the engine) as a
pydot graph: the picture the seed documents draw of GE graphs.

Each node is a box with its type and name; ``Data`` shows its index, dtype, shape
(``-1`` where dynamic), placement (NPU: device, CPU: host) and the symbolic scalars it
carries; a ``Const`` its dtype, shape and, when small, its values; other nodes their
attrs. The op's own node is highlighted. An input the op writes in place (a ref
output, named as the input it writes) has its edge drawn as a ref, and the graph
output that TorchAir copies back into a graph input points back at that ``Data``. A
node a failed check concerns is marked red with the check's note.
"""

from __future__ import annotations

import html

import pydot

from opsdk.offline.ge import GeGraphError, decode_const
from opsdk.offline.ge import dump as ge_dump

__all__ = ["COLORS", "dot_of"]

# Fill colours by role; the op's and a marked node's are what a reader looks for first.
COLORS = {
    "op": "#ffd54f",
    "op_border": "#e65100",
    "marked": "#ffcdd2",
    "marked_border": "#c62828",
    "device": "#e3f2fd",  # Data placed on NPU
    "host": "#fff3e0",  # Data placed on CPU
    "Const": "#eeeeee",
    "TensorMove": "#e1bee7",
    "NetOutput": "#c8e6c9",
    "ref": "#6a1b9a",
    "other": "#ffffff",
}
_SMALL = 8  # a Const with at most this many values shows them
_DATA = ("Data", "RefData")


def _row(text: str, color: str | None = None, bold: bool = False) -> str:
    cell = html.escape(text)
    if bold:
        cell = f"<b>{cell}</b>"
    if color:
        cell = f'<font color="{color}">{cell}</font>'
    return f'<tr><td align="left">{cell}</td></tr>'


def _label(rows: list[str]) -> str:
    return '<<table border="0" cellborder="0" cellspacing="0">' + "".join(rows) + "</table>>"


def _desc(desc) -> str:
    """``float32 [-1, 4]``; ``float32`` while GE has not inferred the shape."""
    dtype = ge_dump.dtype_name(desc)
    return f"{dtype} {list(desc.shape.dim)}" if desc.device_type else dtype


def _const_rows(op) -> list[str]:
    tensor = op.attr["value"].t if "value" in op.attr else None
    if tensor is None:
        return []
    desc = f"{ge_dump.dtype_name(tensor.desc)} {list(tensor.desc.shape.dim)}"
    try:
        value = decode_const(tensor)
    except GeGraphError:
        return [_row(desc)]
    if value.numel() <= _SMALL:
        return [_row(f"{desc} = {value.tolist()}")]
    return [_row(f"{desc}: {value.numel()} values")]


def _data_rows(op, symbols: str | None) -> list[str]:
    desc = op.output_desc[0] if op.output_desc else None
    rows = [_row(f"index {op.attr['index'].i}")] if "index" in op.attr else []
    if desc is not None:
        rows.append(_row(_desc(desc)))
        where = {"NPU": "NPU (device)", "CPU": "CPU (host)"}.get(desc.device_type)
        rows.append(_row(where or f"placement {desc.device_type or 'unknown'}"))
    if symbols:
        rows.append(_row(f"symbolic scalar {symbols}", COLORS["ref"]))
    return rows


def _fill(op, is_op: bool) -> str:
    if is_op:
        return COLORS["op"]
    if op.type in _DATA:
        placed = op.output_desc[0].device_type if op.output_desc else ""
        return COLORS["host"] if placed == "CPU" else COLORS["device"]
    return COLORS.get(op.type, COLORS["other"])


def _refs(op) -> dict[int, int]:
    """Output index -> input index for each output named as an input: a ref output, the
    input written in place (GE's convention, and TorchAir's for in-place custom ops)."""
    inputs = {d.name: i for i, d in enumerate(op.input_desc)}
    return {o: inputs[d.name] for o, d in enumerate(op.output_desc) if d.name in inputs}


def _producer(edge: str) -> tuple[str, int]:
    name, _, port = edge.rpartition(":")
    return name, int(port)


def _written_input(ops: dict, edge: str) -> str | None:
    """The graph input (``Data``) a value is written into: follow ref outputs and
    ``TensorMove`` copies back from ``edge``; None when the value is no such write."""
    name, port = _producer(edge)
    seen = set()
    while name in ops and name not in seen:
        seen.add(name)
        op = ops[name]
        if op.type in _DATA:
            return name if len(seen) > 1 else None  # an input returned as it is: no write
        inputs = [i for i in op.input if not i.endswith(":-1")]
        if op.type == "TensorMove" and inputs:
            name, port = _producer(inputs[0])
        elif port in _refs(op) and _refs(op)[port] < len(inputs):
            name, port = _producer(inputs[_refs(op)[port]])
        else:
            return None
    return None


def dot_of(
    graph,
    op_types=frozenset(),
    symbols: dict[str, str] | None = None,
    marks: dict[str, str] | None = None,
) -> pydot.Dot:
    """``graph`` (a GE ``GraphDef``) as a pydot graph: ``op_types`` are the op's node
    types (highlighted), ``symbols`` the symbolic scalars each ``Data`` carries, ``marks``
    a note per node a failed check concerns."""
    symbols, marks = symbols or {}, marks or {}
    dot = pydot.Dot(
        "ge",
        graph_type="digraph",
        rankdir="TB",
        label=f"GE graph {graph.name}",
        labelloc="t",
        fontname="Helvetica",
    )
    dot.set_node_defaults(shape="box", style="rounded,filled", fontname="Helvetica", fontsize="10")
    dot.set_edge_defaults(fontname="Helvetica", fontsize="9")
    ops = {op.name: op for op in graph.op}
    ids = {name: f"n{i}" for i, name in enumerate(ops)}
    written = {}  # a Data -> the NetOutput edges that TorchAir copies back into it
    for op in graph.op:
        is_op = op.type in op_types
        rows = [_row(f"{op.type}  {op.name}" if op.type != op.name else op.type, bold=True)]
        if op.type in _DATA:
            rows += _data_rows(op, symbols.get(op.name))
        elif op.type == "Const":
            rows += _const_rows(op)
        else:
            rows += [_row(item) for item in ge_dump.attr_text(op)]
        attrs = {"fillcolor": _fill(op, is_op)}
        classes = ["op"] * is_op
        if is_op:
            attrs |= {"color": COLORS["op_border"], "penwidth": "3"}
        if op.name in marks:
            rows.append(_row(f"✗ {marks[op.name]}", COLORS["marked_border"], bold=True))
            attrs |= {"color": COLORS["marked_border"], "penwidth": "3"}
            attrs["fillcolor"] = attrs["fillcolor"] if is_op else COLORS["marked"]
            classes.append("marked")
        if classes:
            attrs["class"] = " ".join(classes)
        dot.add_node(pydot.Node(ids[op.name], label=_label(rows), tooltip=op.name, **attrs))
        _add_edges(dot, op, ops, ids, written)
    for data, outputs in written.items():
        for output, index in outputs:
            dot.add_edge(
                pydot.Edge(
                    ids[output],
                    ids[data],
                    label=f"output {index}: written back into {data}",
                    style="dashed",
                    color=COLORS["ref"],
                    fontcolor=COLORS["ref"],
                    constraint="false",
                    tailport="e",
                    headport="e",
                )
            )
    return dot


def _add_edges(dot: pydot.Dot, op, ops: dict, ids: dict, written: dict) -> None:
    data = [e for e in op.input if not e.endswith(":-1")]
    written_here = set(_refs(op).values())
    for index, edge in enumerate(data):
        name, port = _producer(edge)
        if name not in ids:
            continue
        producer = ops[name]
        target = op.input_desc[index].name if index < len(op.input_desc) else str(index)
        source = producer.output_desc[port].name if port < len(producer.output_desc) else ""
        label = target if len(producer.output_desc) < 2 else f"{source or port} → {target}"
        attrs = {}
        if index in written_here:
            label += " (ref)"  # GE's word: the op writes this input in place
            attrs = {"color": COLORS["ref"], "fontcolor": COLORS["ref"], "penwidth": "2"}
        dot.add_edge(pydot.Edge(ids[name], ids[op.name], label=label, **attrs))
        if op.type == "NetOutput":
            into = _written_input(ops, edge)
            if into is not None:
                written.setdefault(into, []).append((op.name, index))
    for edge in op.input:
        name = edge.rpartition(":")[0]
        if edge.endswith(":-1") and name in ids:
            dot.add_edge(pydot.Edge(ids[name], ids[op.name], style="dashed", color="#9e9e9e"))
