"""The post-AOT FX graph a backend lowered, drawn by torch's own ``FxGraphDrawer``.

torch draws each node as a record (name, op code, target, arguments, users and,
from ``tensor_meta``, dtype, shape and stride). A post-AOT graph carries its fake
values in ``meta["val"]`` instead, so their metadata is lent to the drawer while it
draws. The op's node (``auto_functionalized_v2`` for an in-place op) is highlighted,
a symbolic scalar input says which symbol it is, and a node a failed check concerns
is marked red with the check's note.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pydot
import torch
from torch.fx.passes.graph_drawer import FxGraphDrawer
from torch.fx.passes.shape_prop import TensorMetadata

from opsdk.report.graphs.ge import COLORS

__all__ = ["dot_of"]

_RECORD_SPECIALS = str.maketrans({c: f"\\{c}" for c in '{}|<>"'})


def _metadata(value) -> TensorMetadata | None:
    if not isinstance(value, torch.Tensor):
        return None
    return TensorMetadata(
        value.shape, value.dtype, value.requires_grad, value.stride(), None, False, {}
    )


@contextlib.contextmanager
def _tensor_meta(graph_module: torch.fx.GraphModule) -> Iterator[None]:
    """Each node's ``meta["tensor_meta"]`` from its fake value while the block runs."""
    lent = []
    for node in graph_module.graph.nodes:
        meta = _metadata(node.meta.get("val"))
        if meta is not None and "tensor_meta" not in node.meta:
            node.meta["tensor_meta"] = meta
            lent.append(node)
    try:
        yield
    finally:
        for node in lent:
            del node.meta["tensor_meta"]


def _append(node: pydot.Node, text: str) -> None:
    """One more field at the end of a record node's label."""
    label = node.get("label")
    field = "|" + text.translate(_RECORD_SPECIALS) + r"\l"
    node.set("label", label[:-1] + field + "}" if label.endswith("}") else label + field)


def dot_of(
    graph_module: torch.fx.GraphModule,
    op_nodes=frozenset(),
    marks: dict[str, str] | None = None,
) -> pydot.Dot:
    """``graph_module`` as a pydot graph, ``op_nodes`` highlighted and ``marks`` (a note
    per node name) marked."""
    marks = marks or {}
    with _tensor_meta(graph_module):
        dot = FxGraphDrawer(graph_module, "fx").get_main_dot_graph()
    dot.set("label", "FX graph after AOT")
    dot.set("labelloc", "t")
    dot.set("fontname", "Helvetica")
    symbolic = {
        n.name: str(n.meta["val"])
        for n in graph_module.graph.nodes
        if n.op == "placeholder" and isinstance(n.meta.get("val"), torch.SymInt | torch.SymFloat)
    }
    for node in dot.get_nodes():
        name = node.get_name().strip('"')
        node.set("fontname", "Helvetica")
        node.set("fontsize", "10")
        classes = []
        if name in symbolic:
            _append(node, f"symbolic scalar {symbolic[name]}")
        if name in op_nodes:
            node.set("fillcolor", COLORS["op"])
            node.set("color", COLORS["op_border"])
            node.set("penwidth", "3")
            classes.append("op")
        if name in marks:
            _append(node, f"✗ {marks[name]}")
            node.set("color", COLORS["marked_border"])
            node.set("penwidth", "3")
            if name not in op_nodes:
                node.set("fillcolor", COLORS["marked"])
            classes.append("marked")
        if classes:
            node.set("class", " ".join(classes))
    return dot
