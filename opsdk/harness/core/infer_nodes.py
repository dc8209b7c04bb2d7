"""A GE node as the op's C++ inference is handed it, and what TorchAir traced for it.

Shared by the ``ge`` column's ``infer`` layer (a node the GE stand-in runs) and the
audit's ``infer`` check (a node TorchAir lowered): both give the C++ the node's inputs
(traced, with -1 for a symbolic dim, or real) and attrs in IR order, and hold it to the
fake function's outputs TorchAir recorded on the node.
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from opsdk._runtime import irdef, types
from opsdk.cann import infer
from opsdk.offline.ge.proto import decode_attr, dtype_name

__all__ = ["attr", "compiled", "ge", "given", "instances", "ir_name", "traced"]

_COMPILED: dict[tuple[str, str], infer.Library | str] = {}
_UNDEFINED = types.DTYPES["DT_UNDEFINED"]


def compiled(inference: infer.Inference, root: Path) -> infer.Library | str:
    """``inference`` compiled (once a process) and loaded, or why it is not (a line)."""
    key = (inference.op_type, str(root))
    if key not in _COMPILED:
        try:
            built = infer.build(inference, root)
            library = infer.Library(built.library, Path(root).resolve())
            library.ops()  # loads it: a function defined in a file not built with it
            _COMPILED[key] = library
        except (infer.CompileFailure, infer.Unlinked) as err:
            _COMPILED[key] = str(err)
        except OSError as err:  # it links, but needs a symbol no file of it defines
            _COMPILED[key] = f"does not load: {err}"
    return _COMPILED[key]


def ir_name(tensors, name: str) -> str:
    """The IR input or output a node's tensor is (``x1`` of a dynamic ``x`` is ``x``)."""
    for tensor in tensors:
        if name == tensor.name or (
            tensor.kind == "dynamic"
            and name.startswith(tensor.name)
            and name[len(tensor.name) :].isdigit()
        ):
            return tensor.name
    return name


def instances(ir: irdef.IrDef, node_def) -> list[list[int]]:
    """Per IR input, the node's input slots that are its instances (as GE counts them): an
    optional input TorchAir leaves unconnected (its ``None``: an empty input name beside
    an invalid desc) has none, as InferShape sees it (``GetOptionalInputShape`` null)."""
    names = [d.name for d in node_def.input_desc]
    connected = [i < len(node_def.input) and node_def.input[i] != "" for i in range(len(names))]
    slots = []
    for spec in ir.inputs:
        if spec.kind == "dynamic":
            mine = [i for i, n in enumerate(names) if ir_name([spec], n) == spec.name]
        else:
            mine = [names.index(spec.name)] if spec.name in names else []
            mine = [i for i in mine if connected[i]]
        slots.append(mine)
    return slots


def traced(desc) -> tuple[tuple[int, ...] | None, str | None]:
    """The shape and GE dtype TorchAir traced for an output: its ``_meta`` attr, the FX
    fake value (a symbolic size as -1); None for what it did not record. The descriptor's
    own dtype is not it: a written input's output keeps whatever GE's default was."""
    meta = desc.attr["_meta"].s.decode() if "_meta" in desc.attr else ""
    shape = re.search(r"shape=torch\.Size\(\[(.*?)\]\)", meta)
    dtype = re.search(r"dtype=(torch\.\w+)", meta)
    row = types.dtype(dtype.group(1)) if dtype else None
    if shape is None:
        return None, row.ge if row else None
    sizes = [s.strip() for s in _top_level(shape.group(1)) if s.strip()]
    return tuple(int(s) if s.isdigit() else -1 for s in sizes), row.ge if row else None


def _top_level(text: str) -> list[str]:
    """``text`` split at its commas outside parentheses: a symbolic size is an expression
    (``FloorToInt(IntTrueDiv(s0, 2))``), one dim."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def given(desc, value=None, ir=None, at=None) -> infer.Given:
    """An input as GE hands it to InferShape: at compile (``desc`` as traced, or ``at``,
    what GE inferred before the node: :class:`~opsdk.offline.ge.executor.AtCompile`, a
    Const's data for a value-depend input) or at run (``value``), with host data for a
    value-depend input."""
    depend = ir is not None and desc.name in {i.name for i in ir.inputs if i.value_depend}
    if value is None:
        row = types.DTYPES.get(dtype_name(desc) or "")
        shape = tuple(desc.shape.dim) if at is None else at.shape
        data = _data(at.const) if depend and at is not None and at.const is not None else None
        return infer.Given((row or _UNDEFINED).value, shape, data, depend=depend)
    value = value if isinstance(value, torch.Tensor) else torch.as_tensor(value)
    data = _data(value) if depend else None
    return infer.Given(ge(value.dtype).value, tuple(value.shape), data, depend=depend)


def _data(value: torch.Tensor) -> bytes:
    """``value``'s bytes, as GE reads a value-depend input on the host."""
    return value.detach().cpu().contiguous().numpy().tobytes()


def attr(node_def, attr: irdef.Attr):
    """An IR attr's value as the node sets it, else the IR's default (GE fills it in)."""
    if attr.name not in node_def.attr:
        return attr.default
    value = decode_attr(node_def.attr[attr.name])
    if isinstance(value, torch.dtype):
        return ge(value).value
    return value


def ge(dtype: torch.dtype) -> types.DType:
    """GE's row of a torch dtype (DT_UNDEFINED for one GE lacks)."""
    return types.dtype(str(dtype)) or _UNDEFINED
