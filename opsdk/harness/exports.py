"""The files `opsdk ir` writes for an op package's ops: each op type's CANN definition
(msopgen JSON, ``REG_OP``, an op_host OpDef ``.cpp``) or the aclnn API declarations CANN's
build generates from it, rendered from the IR its ``ir.py`` registers."""

from __future__ import annotations

from opsdk._runtime import irdef
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp, aclnn, declared, exports
from opsdk.errors import OpsdkError
from opsdk.harness import dtypes
from opsdk.harness.cell import OpUnderTest

__all__ = ["FORMATS", "files"]

# format -> (render an op, its file's name), as CANN's ops repositories name them
FORMATS = {
    "msopgen": (exports.msopgen_json, lambda ir: f"{exports.file_stem(ir)}.json"),
    "reg_op": (exports.reg_op, lambda ir: f"{exports.file_stem(ir)}_proto.h"),
    "opdef": (exports.opdef_cpp, lambda ir: f"{exports.file_stem(ir)}_def.cpp"),  # op_host/
    "aclnn": (aclnn.header, aclnn.file_name),
}


def files(ops: list[OpUnderTest], fmt: str) -> dict[str, str]:
    """File name -> text of each op type of ``ops`` in ``fmt``, all of them or an error
    (an op without an IR) before any is rendered, in discovery order (an in-place and
    functional pair shares one)."""
    irs: dict[str, IrDef] = {}
    for op in ops:
        found = irdef.for_op(op.name)
        if not found:
            raise OpsdkError(
                f"{op.name} has no GE IR definition registered: add an IrDef with "
                f"torch_op={op.name!r} to the package's ir.py"
            )
        irs.update((ir.op_type, ir) for ir in found)
    render, file_name = FORMATS[fmt]
    return {file_name(ir): render(_model(ir, fmt)) for ir in irs.values()}


def _model(ir: IrDef, fmt: str) -> CannOp:
    """The op as an export needs it: the CANN definition its IR keeps (a ``--from-cann``
    package's), else with the data types its cases give (which runs the fake function),
    except the aclnn API, which has none but a ValueDepend input's host array; so a
    definition's exports are written before the reference exists."""
    kept = declared(ir)
    if kept is not None:
        return kept
    if fmt == "aclnn" and not any(i.value_depend for i in ir.inputs):
        return CannOp(ir)
    return dtypes.model(ir)
