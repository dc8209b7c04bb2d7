"""Inputs whose value CANN reads on the host, as the op's shape inference registers them.

An OpDef marks such an input ``.ValueDepend(...)``; many ops say it only where their
InferShape is registered: ``IMPL_OP_INFERSHAPE(TopKV2)...InputsDataDependency({1})``
(its ``k``; ops-math's ``top_k_v2_infershape.cpp``). GE gives InferShape that input's
value when the host knows it and infers an unknown shape when not, which is what
``.ValueDepend(OPTIONAL)`` says: such an input is marked so on the IR, the one notion
of a value input the torch side, specs, converter and aclnn call read.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

from opsdk.cann._model import CannOp, CannWarning
from opsdk.cann.infer import sources

__all__ = ["marked"]


def marked(ops: list[CannOp], folder: Path, where: str) -> list[CannOp]:
    """``ops`` (read from the file ``where``) with each input that the InferShape registered
    under ``folder`` reads the value of marked ``value_depend="optional"`` (an input the
    definition marks already keeps its own option)."""
    found = sources.find_all(folder)
    return [_marked(op, found.get(op.ir.op_type), where) for op in ops]


def _marked(op: CannOp, inference: sources.Inference | None, where: str) -> CannOp:
    if inference is None or not (inference.data_inputs or inference.unresolved):
        return op
    registered = f"{inference.sources[0].name}'s InputsDataDependency of {op.ir.op_type}"
    for word in inference.unresolved:
        _warn(
            f"{where}: {registered}: {word!r} is no number nor a constant of that file; "
            "the input it names stays a tensor: mark it .ValueDepend(OPTIONAL) in the OpDef"
        )
    inputs = list(op.ir.inputs)
    for index in inference.data_inputs:
        if index >= len(inputs):
            _warn(f"{where}: {registered}: input {index} does not exist ({len(inputs)} inputs)")
        elif not inputs[index].value_depend:
            inputs[index] = dataclasses.replace(inputs[index], value_depend="optional")
    return dataclasses.replace(op, ir=dataclasses.replace(op.ir, inputs=tuple(inputs)))


def _warn(message: str) -> None:
    warnings.warn(message, CannWarning, stacklevel=4)
