"""Check ``ascendc``: the AscendC tiling and kernel of each CANN op the converter lowers
to, from the ``--ir`` projects, run offline by the engine the ``ascendc`` column of
``opsdk check`` runs (:mod:`opsdk.cann.kernel.op`), the hardware's limits checked.

Each declared case is lowered as the ``infer`` check lowers it, and every GE node whose
op type has a kernel (``op_kernel/``) and a TilingFunc (``op_host/``) in the projects is
tiled on the node's own inputs and attrs and its kernel launched with outputs sized as
TorchAir traced them (the Meta function's); then on the op's own host unit-test cases
(:mod:`opsdk.cann.ut_cases`, the smallest :data:`OWN`), outputs shaped by its C++
InferShape. The library's kernel is not run, so there is no reference to compare values
with: the findings are the kernel's and the tiling's defects (GM out of bounds, UB
overflow, workspace read unwritten, cores racing, queue misuse, a tiling crash or
refusal, a block dim above the chip's cores), each with the block, the case and the
source line. A write past an output is a disagreement between the Meta function, which
sized it, and the kernel, both named. What the tiling says on a case the library declares
(a refusal, a crash) is a finding; on a derived case or an own test's, a note. What the
stand-ins do not model (a missing identifier, the cube unit, communication, arch35,
matmul_tiling) is a note with the reason; an op none of whose nodes ran is a skip, never
a pass.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from opsdk._runtime import spec, types
from opsdk.audit import inference, kernels
from opsdk.audit.checks import Undecided, where
from opsdk.audit.checks.infer import definition_rows, given_to, lowered
from opsdk.cann import infer, tiling, ut_cases
from opsdk.cann.infer.call import Given
from opsdk.cann.kernel import sources
from opsdk.cann.kernel.op import AscendcOp, NotRun, Ran
from opsdk.harness.cell import CellFailure
from opsdk.harness.core import infer_nodes as nodes
from opsdk.harness.variants.cases import cases

__all__ = ["ELEMENTS", "OWN", "check"]

OWN = 3  # the op's own host-test cases run per op type, smallest first
ELEMENTS = 1 << 20  # an own test's case run at most this big (its tensors' elements)

_KERNEL = "fix the AscendC kernel"  # what a line about the kernel says (its layer's)
_WRITE_PAST = re.compile(r"GM write of \d+ B at offset -?\d+ of (\S+) \(")


def check(library, audit_op, shapes: str) -> list[str]:
    if not audit_op.cases:
        raise Undecided(audit_op.no_case)
    known = inference.index(library.infer_roots)
    declared = audit_op.origin == "declared"
    ops: dict[str, AscendcOp | str] = {}  # op type -> its engine, or why it is not run
    notes, found, runs = [], [], [0, 0]
    try:
        for case in cases(spec.of(audit_op.op), shapes, "ge"):
            for _, graph, node in lowered(audit_op, case, shapes, known, notes):
                ascendc = _engine(ops, library, known, node.type)
                if isinstance(ascendc, str):
                    continue
                at = f"case {case.label}: GE node {node.name} ({node.type})"
                made = _node_case(
                    library, known[node.type][0], graph, node, ascendc.chip, case.label
                )
                if isinstance(made, str):
                    notes.append(f"{at} not run: {made}")
                    continue
                ran = _run(ops, node.type, made)
                if ran is None:
                    continue
                runs[0] += 1
                meta = ("the Meta function", f"{where(audit_op.meta)}, as TorchAir traced it,")
                said = _judged(ran, ascendc, meta, declared)
                (found if said[0] else notes).extend(f"{at}: {s}" for s in said[1])
        for op_type, ascendc in list(ops.items()):
            if isinstance(ascendc, AscendcOp):
                runs[1] += _own(ops, op_type, ascendc, library, known, found, notes)
    finally:
        for ascendc in ops.values():
            if isinstance(ascendc, AscendcOp):
                ascendc.close()
    notes += [
        f"GE nodes {t} not run: {why}" for t, why in sorted(ops.items()) if isinstance(why, str)
    ]
    if found:  # in the kernel's layer where it broke, else the tiling's
        layer = "kernel" if any(_KERNEL in line for line in found) else "tiling"
        raise CellFailure(layer, "; ".join(found))
    if not sum(runs):
        none = [] if ops else ["no GE node it lowers to has an AscendC kernel in the --ir paths"]
        raise Undecided("; ".join(none + notes))
    ran_on = ", ".join(sorted(t for t, e in ops.items() if isinstance(e, AscendcOp)))
    said = f"ran the AscendC tiling and kernel of {ran_on} on {runs[0]} cases"
    return [f"{said} and {runs[1]} of its own host tests'" if runs[1] else said, *notes]


def _engine(ops: dict, library, known, op_type: str) -> AscendcOp | str:
    """``op_type``'s engine, made once a check; or why it is not run."""
    if op_type not in ops:
        inference_of = known[op_type][0]
        found = _sources(op_type, library.infer_roots, ut_cases.folder_of(inference_of.sources[0]))
        cann_op = definition_rows(library, inference_of, op_type)
        if found is None:
            ops[op_type] = "no AscendC kernel of it in the --ir paths"
        elif cann_op is None:
            ops[op_type] = f"no definition of {op_type} is known"
        else:
            try:
                ir = _with_dtypes(cann_op)
                ref = any(o.name in ir.ir_input_names for o in ir.outputs)  # GE's ref outputs
                ops[op_type] = AscendcOp(ir, found, in_place=ref)
            except NotRun as err:
                ops[op_type] = str(err)
    return ops[op_type]


def _run(ops: dict, op_type: str, case: tiling.Case) -> Ran | None:
    """``case`` run by ``op_type``'s engine; None where it cannot be (the engine is then
    replaced by the reason)."""
    try:
        return ops[op_type].run(case)
    except NotRun as err:
        ops[op_type].close()
        ops[op_type] = str(err)
        return None


def _judged(
    ran: Ran, ascendc: AscendcOp, sized_by: tuple[str, str], certain: bool
) -> tuple[bool, list[str]]:
    """Whether ``ran`` found defects, and what it found (lines; none: it ran clean). What
    the tiling says (a refusal, a crash) is a defect only on a ``certain`` case (one the
    library declares); every kernel finding is one (the tiling accepted the case), a write
    past an output a disagreement with what sized it (``sized_by``: who, where)."""
    root = ascendc.sources.root
    if ran.launch is None:
        said = "; ".join(map(str, ran.tiled.findings)) or f"returned {ran.tiled.status}"
        if not certain:  # a case the op may never take (GE's InferShape may refuse it first)
            return False, [f"its TilingFunc on a case the library does not declare: {said}"]
        return True, [f"the op's TilingFunc (in {root}): {said}; fix it in op_host/"]
    lines = []
    outputs = {p for p, n in ran.params.items() if n in {o.name for o in ascendc.ir.outputs}}
    who, at = sized_by
    for finding in ran.launch.findings:
        past = _WRITE_PAST.search(finding.what)
        name = past and past[1].split("[")[0]
        if past and name in outputs:
            lines.append(
                f"the kernel writes past output {ran.params[name]}, which {who}{at} sizes: "
                f"{finding}; {who} and the kernel (in {root}) disagree: fix whichever is wrong "
                f"({_KERNEL} in op_kernel/, or {who})"
            )
        else:
            lines.append(f"the op's kernel (in {root}): {finding}; {_KERNEL} in op_kernel/")
    return bool(lines), lines


def _node_case(
    library, inference_of, graph: dict, node, chip: str, label: str
) -> tiling.Case | str:
    """The node as GE hands it to the tiling: its inputs and attrs as the ``infer`` check
    reads them, its outputs as TorchAir traced them; or why the audit cannot give it."""
    fed = given_to(library, inference_of, graph, node)
    if isinstance(fed, str):
        return fed
    _, inputs, attrs = fed
    outputs = []
    for desc in node.output_desc:
        shape, dtype = nodes.traced(desc)
        if shape is None or dtype is None or any(d < 0 for d in shape):
            return "an output's size is not in the graph (TorchAir traced none)"
        outputs.append(Given(types.DTYPES[dtype].value, shape))
    return tiling.Case(
        tuple(map(tuple, inputs)), tuple(outputs), tuple(attrs), chip=chip, label=label
    )


def _own(
    ops: dict, op_type: str, ascendc: AscendcOp, library, known, found: list, notes: list
) -> int:
    """Run ``op_type``'s own host-test cases (the smallest :data:`OWN` up to
    :data:`ELEMENTS`), outputs shaped by its C++ InferShape as GE would: the kernel's
    findings go to ``found``, a refusal to ``notes``; how many ran."""
    inference_of, root = known[op_type]
    loaded = nodes.compiled(inference_of, root)
    if isinstance(loaded, str):
        notes.append(f"{op_type}: its own host tests not run (its C++ InferShape {loaded})")
        return 0
    cann_op = definition_rows(library, inference_of, op_type)
    folders = (
        ascendc.sources.root,
        *(ut_cases.folder_of(s) for s in ascendc.sources.tiling.sources[:1]),
    )
    own = [c for c in ut_cases.cases(cann_op, *folders) if ut_cases.elements(c) <= ELEMENTS]
    count = 0
    for case in own[:OWN]:
        shaped = _shaped(loaded, op_type, case, ascendc.chip)
        if shaped is None:
            notes.append(
                f"{op_type}: own test {case.label} not run (its C++ InferShape refuses it)"
            )
            continue
        ran = _run(ops, op_type, shaped)
        if ran is None:
            break
        count += 1
        sized_by = ("its C++ InferShape", f" ({inference_of.infer_shape}), as GE would,")
        defect, said = _judged(ran, ascendc, sized_by, certain=False)
        (found if defect else notes).extend(f"{op_type} on its own test's case {s}" for s in said)
    return count


def _shaped(loaded, op_type: str, case: tiling.Case, chip: str) -> tiling.Case | None:
    """``case`` with its outputs as the op's C++ InferShape / InferDataType make them (what
    GE sizes the kernel's outputs by); None where it refuses the case."""
    counts = case.output_counts or len(case.outputs)
    try:
        answer = loaded.infer(
            op_type, [list(i) for i in case.inputs], list(case.attrs), counts, chip=chip
        )
    except (infer.Crashed, KeyError):
        return None
    if answer.shape_status != 0 or len(answer.shapes) < len(case.outputs):
        return None
    undefined = types.DTYPES["DT_UNDEFINED"].value
    dtypes = answer.dtypes if answer.dtype_status == 0 else ()
    outputs = tuple(
        Given(
            dtypes[i] if i < len(dtypes) and dtypes[i] != undefined else given.dtype,
            answer.shapes[i],
        )
        for i, given in enumerate(case.outputs)
    )
    return tiling.Case(
        case.inputs,
        outputs,
        case.attrs,
        chip=chip,
        label=case.label,
        output_counts=case.output_counts,
    )


def _with_dtypes(cann_op):
    """The IR with its definition's dtype rows and chips (what the kernel is built per)."""
    try:
        return dataclasses.replace(
            cann_op.ir,
            dtypes=tuple((n, d) for n, d in cann_op.dtypes.items() if d),
            dtype_sets=not cann_op.rows,
            chips=cann_op.chips or cann_op.ir.chips,
        )
    except ValueError:  # a row of dtypes the type table lacks: the IR as it is
        return cann_op.ir


@functools.cache
def _sources(op_type: str, roots: tuple[Path, ...], near: Path) -> sources.AscendC | None:
    """``op_type``'s AscendC sources: in the op folder of its C++ (``near``), else in any
    op folder of the ``--ir`` paths with a kernel file of its entry's name."""
    named = kernels.op_folders(roots).get(sources.entry_name(op_type), ())
    for folder in dict.fromkeys((near, *named)):
        found = sources.find(op_type, folder)
        if found is not None:
            return found
    return None
