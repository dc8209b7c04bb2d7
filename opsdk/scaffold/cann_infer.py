"""A ``--from-cann`` op's C++ shape and dtype inference, copied into its package.

The package holds its own copy (``cann_infer/``, the project's layout kept below the
folder searched) so it is checked wherever it goes: the inference is the user's own
code, and the ``ge`` column holds the op's fake function to it (see
:mod:`opsdk.cann.infer`). Its ``ir.py`` names the folder (``IrDef.infer_root``), also
when none was found: the folder's absence is then why its cells say it is not checked.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import torch

from opsdk._runtime import types
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp, counts, infer

__all__ = ["FOLDER", "acceptor", "copy", "find"]

FOLDER = "cann_infer"
_SPARE_OUTPUTS = 16  # outputs beyond the IR's a dynamic one may need (its count is a value)


# Folders that hold an op's definition whose C++ may be beside them: a REG_OP in
# ``op_graph`` (its InferShape in ``op_host``), or in ``op_proto/inc`` (its infer function
# in ``op_proto``).
_OP_PARTS = frozenset({"op_host", "op_graph", "inc"})


def find(source: Path, op_type: str) -> tuple[infer.Inference, Path] | None:
    """The inference of ``op_type`` near its definition ``source`` and the folder it was
    found in: the definition's folder (an ``op_host``, or a project holding one), else,
    for an ``op_host``, ``op_graph`` or ``inc`` one, its parent."""
    folder = Path(source).resolve().parent
    roots = [folder, folder.parent] if folder.name in _OP_PARTS else [folder]
    for root in roots:
        found = infer.find(op_type, root)
        if found:
            return found, root
    return None


def copy(found: tuple[infer.Inference, Path], package: Path) -> None:
    """Copy the inference's files into ``package/cann_infer``, as laid out under its folder,
    or under the folder they share when the project's shared headers are outside it (the
    repository's ``common/inc``: the copy keeps them where the build looks for them)."""
    inference, root = found
    paths = infer.project_files(inference, root)
    base = Path(os.path.commonpath([root.resolve(), *paths]))
    for path in paths:
        target = package / FOLDER / path.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def acceptor(found: tuple[infer.Inference, Path], ir: IrDef, op: CannOp):
    """Whether the op's InferShape accepts a case: ``accepts(shapes, values, dtypes)`` (IR
    names: the given tensor inputs' shapes, -1 a dim symbolic at compile time; value
    inputs' values and attrs' values, the others at their defaults; the inputs' GE dtypes,
    the definition's first row where not given: False refused, None crashed); None when
    it has no InferShape or it does not compile here (the ``ge`` column's layer ``infer``
    says why)."""
    inference, root = found
    if inference.infer_shape is None:
        return None
    try:
        library = infer.Library(infer.build(inference, root).library, root)
    except (infer.CompileFailure, OSError):
        return None
    first = {name: row[0] for name, row in op.dtypes.items() if row}
    counted = counts(ir)
    chip = infer.chip(op.chips)
    # A dynamic output has as many instances as an attr or input says (SplitV's num_split):
    # room for them all, the C++ writes those it makes.
    outputs = len(ir.outputs) + (
        _SPARE_OUTPUTS if any(o.kind == "dynamic" for o in ir.outputs) else 0
    )

    def accepts(shapes: dict, values: dict, dtypes: dict | None = None) -> bool:
        given, row = [], {**first, **(dtypes or {})}
        for tensor in ir.inputs:
            dtype = types.DTYPES[row.get(tensor.name, "DT_FLOAT")].value
            if tensor.name in values and tensor.value_depend:
                given.append(_value(dtype, values[tensor.name]))
            elif tensor.name in values:  # a host number GE hands over as a 0-D tensor
                given.append([infer.Given(dtype, ())])
            elif tensor.name in shapes:
                count = 2 if tensor.kind == "dynamic" else 1
                given.append([infer.Given(dtype, shapes[tensor.name])] * count)
            else:
                unsized = infer.Given(dtype, (), depend=tensor.value_depend)
                given.append([] if tensor.kind != "required" else [unsized])
        attrs = [_attr(values.get(a.name, a.default)) for a in ir.attrs]
        attrs = [2 if a.name in counted else v for a, v in zip(ir.attrs, attrs, strict=True)]
        try:
            answer = library.infer(ir.op_type, given, attrs, outputs, chip=chip)
        except infer.Crashed:  # the C++ cannot take this case: neither can the op (the
            return None  # ``ge`` column's layer ``infer`` names the crash); None: crashed
        return answer.shape_status == 0

    return accepts


def _value(dtype: int, value) -> list[infer.Given]:
    """A value input as GE hands InferShape a host constant (none: absent)."""
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    code = "i" if dtype == types.DTYPES["DT_INT32"].value else "q"
    data = struct.pack(f"<{len(values)}{code}", *values)
    return [infer.Given(dtype, (len(values),) if isinstance(value, list) else (), data)]


def _attr(value):
    """An attr value as the inference reads it (a torch dtype as GE's number)."""
    return types.dtype(str(value)).value if isinstance(value, torch.dtype) else value
