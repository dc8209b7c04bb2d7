"""A GE graph as readable Python: one line per node, custom ops included.

TorchAir's own ``py`` dump records only what its Python ops builders emitted;
nodes built by ``ge.custom_op`` are missing from it. This one is written from
the graph proto, so every node shows up with its inputs, attrs and outputs.
"""

from __future__ import annotations

from opsdk.offline.ge import GeGraphError, decode_attr, torch_dtype_from_proto


def _value(node_name: str) -> str:
    """``"MyAdd:0"`` -> ``MyAdd_0``; ``"x:-1"`` (control edge) -> ``x``."""
    name, _, index = node_name.rpartition(":")
    return f"{name}_{index}" if index != "-1" else name


def dtype_name(desc) -> str:
    """A tensor descriptor's dtype as torch names it (``float32``), else GE's number."""
    try:
        return str(torch_dtype_from_proto(desc)).replace("torch.", "")
    except GeGraphError:
        return str(desc.dtype)


def _describe(desc) -> str:
    dtype = dtype_name(desc)
    if not desc.device_type:  # not inferred yet: GE fills shapes in when it compiles
        return dtype
    return f"{dtype}{list(desc.shape.dim)}@{desc.device_type}"


def attr_text(op) -> list[str]:
    """The node's own attrs (not TorchAir's ``_``-prefixed bookkeeping) as ``key=value``."""
    items = []
    for key in sorted(op.attr):
        if key.startswith("_"):
            continue
        try:
            items.append(f"{key}={decode_attr(op.attr[key])!r}")
        except GeGraphError:
            items.append(f"{key}=<{op.attr[key].WhichOneof('value')}>")
    return items


def readable(graph) -> str:
    """The graph as ``outputs = Type(inputs, attrs)  # output descs`` lines."""
    lines = [f"# GE graph {graph.name}"]
    for op in graph.op:
        data = [i for i in op.input if not i.endswith(":-1")]
        control = [_value(i) for i in op.input if i.endswith(":-1")]
        names = [d.name or f"in{i}" for i, d in enumerate(op.input_desc)]
        args = [f"{names[i] if i < len(names) else i}={_value(v)}" for i, v in enumerate(data)]
        args += attr_text(op)
        if control:
            args.append(f"dependencies=[{', '.join(control)}]")
        outputs = [f"{op.name}_{i}" for i in range(len(op.output_desc))] or ["_"]
        comment = ", ".join(_describe(d) for d in op.output_desc)
        line = f"{', '.join(outputs)} = {op.type}({', '.join(args)})"
        lines.append(f"{line}  # {comment}" if comment else line)
    return "\n".join(lines) + "\n"
