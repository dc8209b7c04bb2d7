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

import collections
import dataclasses
import functools
import re
from pathlib import Path

from opsdk._runtime import spec, types
from opsdk.audit import inference, kernels
from opsdk.audit.checks import Undecided, where
from opsdk.audit.checks.infer import definition_rows, given_to, lowered
from opsdk.cann import infer, tiling, ut_cases
from opsdk.cann.explore.cases import rows as explore_rows
from opsdk.cann.infer.call import Given
from opsdk.cann.kernel import sources
from opsdk.cann.kernel.op import AscendcOp, NotRun, Ran
from opsdk.harness.cell import CellFailure
from opsdk.harness.core import infer_nodes as nodes
from opsdk.harness.variants.cases import cases

__all__ = ["ELEMENTS", "OWN", "ROWS", "check"]

OWN = 3  # the op's own host-test cases run per op type, smallest first
ROWS = 3  # the definition's other dtype rows run per op type, at its first case's shapes
ELEMENTS = 1 << 20  # an own test's case run at most this big (its tensors' elements)

_WHAT = "an AscendC kernel (op_kernel/) and C++ InferShape in the --ir paths"
_KERNEL = "fix the AscendC kernel"  # what a line about the kernel says (its layer's)
_WRITE_PAST = re.compile(r"GM write of \d+ B at offset -?\d+ of (\S+) \(")


def check(library, audit_op, shapes: str) -> list[str]:
    if not audit_op.cases:
        raise Undecided(audit_op.no_case)
    run = _Run(library, inference.index(library.infer_roots))
    meta = ("the Meta function", f"{where(audit_op.meta)}, as TorchAir traced it,")
    try:
        for case in cases(spec.of(audit_op.op), shapes, "ge"):
            for _, graph, node in lowered(audit_op, case, shapes, run.known, run.notes):
                at = f"case {case.label}: GE node {node.name} ({node.type})"
                ascendc = run.engine(node.type)
                if ascendc is None:
                    continue  # said once, at the end
                inference_of = run.known[node.type][0]
                made = _node_case(library, inference_of, graph, node, ascendc.chip, case.label)
                if isinstance(made, str):
                    run.notes.append(f"{at} not run: {made}")
                elif run.one(node.type, made, "lowered", at, meta, audit_op.origin == "declared"):
                    run.anchors.setdefault(node.type, made)
        for op_type in sorted(run.engines):
            if op_type in run.anchors:
                run.rows(op_type)
            run.own(op_type)
    finally:
        run.close()
    run.notes += [f"GE nodes {t} not run: {why}" for t, why in sorted(run.unrun.items())]
    if run.found:  # in the kernel's layer where it broke, else the tiling's
        layer = "kernel" if any(_KERNEL in line for line in run.found) else "tiling"
        raise CellFailure(layer, "; ".join(run.found))
    if not run.launched:
        none = [] if run.engines or run.unrun else [f"no GE node it lowers to has {_WHAT}"]
        raise Undecided("; ".join(none + run.notes))
    counts = run.counts
    on = [
        f"{counts['lowered']} of its cases' GE nodes" if counts["lowered"] else "",
        f"{counts['rows']} of its definition's other dtype rows" if counts["rows"] else "",
        f"{counts['own']} of its own host tests' cases" if counts["own"] else "",
    ]
    said = f"ran the AscendC tiling and kernel of {', '.join(sorted(run.launched))} on "
    said += ", ".join(filter(None, on))
    return [said, *run.notes]


class _Run:
    """One op's check: the engines of the op types its nodes are (made once), what they
    found, the notes, how many cases of each kind ran, each op type's first case run (the
    anchor of its other rows)."""

    def __init__(self, library, known: dict):
        self.library, self.known = library, known
        self.engines: dict[str, AscendcOp] = {}
        self.unrun: dict[str, str] = {}  # op type -> why it is not run
        self.notes: list[str] = []
        self.found: list[str] = []
        self.counts: collections.Counter = collections.Counter()
        self.anchors: dict[str, tiling.Case] = {}
        self.launched: set[str] = set()  # the op types whose kernel launched

    def engine(self, op_type: str) -> AscendcOp | None:
        """``op_type``'s engine (None: it is not run, said once at the end)."""
        if op_type not in self.engines and op_type not in self.unrun:
            inference_of = self.known[op_type][0]
            near = ut_cases.folder_of(inference_of.sources[0])
            found = _sources(op_type, self.library.infer_roots, near)
            cann_op = definition_rows(self.library, inference_of, op_type)
            if found is None:
                self.unrun[op_type] = f"no {_WHAT} of it"
            elif cann_op is None:
                self.unrun[op_type] = f"no definition of {op_type} is known"
            else:
                ir = _with_dtypes(cann_op)
                ref = any(o.name in ir.ir_input_names for o in ir.outputs)  # GE's ref outputs
                try:
                    self.engines[op_type] = AscendcOp(ir, found, in_place=ref)
                except NotRun as err:
                    self.unrun[op_type] = str(err)
        return self.engines.get(op_type)

    def one(self, op_type, case: tiling.Case, kind: str, at: str, sized_by, certain) -> bool:
        """Run ``case`` (of ``kind``) and judge it: whether the kernel launched. What it
        does on made integers (zeros) is a note: they may be no value the op takes."""
        ascendc = self.engines[op_type]
        try:
            ran = ascendc.run(case)
        except NotRun as err:
            self.notes.append(f"{at} not run: {err}")
            return False
        defect, said = _judged(ran, ascendc, sized_by, certain)
        if defect and ran.launch is not None and ran.made_integers:
            defect, made = False, ", ".join(ran.made_integers)
            said = [
                f"{s} (not a finding: on made zeros as {made}, no values the op's)" for s in said
            ]
        (self.found if defect else self.notes).extend(f"{at}: {s}" for s in said)
        if ran.launch is None:
            return False
        self.counts[kind] += 1
        self.launched.add(op_type)
        return True

    def rows(self, op_type: str) -> None:
        """The definition's other dtype rows (the exploration's, :func:`explore.cases.rows`)
        at the shapes of the op type's first case, which vouch for them: at most
        :data:`ROWS`, where the definition's rows are the combinations its kernel takes
        (an OpDef's), outputs as its C++ makes them."""
        anchor, ascendc = self.anchors[op_type], self.engines[op_type]
        inference_of, root = self.known[op_type]
        cann_op = definition_rows(self.library, inference_of, op_type)
        loaded = nodes.compiled(inference_of, root)
        if not cann_op.rows or isinstance(loaded, str):
            return
        names = [i.name for i in cann_op.ir.inputs]
        given = tuple(tuple(g.dtype for g in instances) for instances in anchor.inputs)
        tried = 0
        for row in explore_rows(cann_op):
            if tried == ROWS:
                break
            if any(row[n] not in types.DTYPES for n in names):
                continue
            dtypes = [types.DTYPES[row[n]].value for n in names]
            if all(set(g) <= {d} for g, d in zip(given, dtypes, strict=True)):
                continue  # the first case's own row
            retyped = tuple(
                tuple(dataclasses.replace(g, dtype=d) for g in instances)
                for instances, d in zip(anchor.inputs, dtypes, strict=True)
            )
            label = f"{anchor.label} as {', '.join(row[n].removeprefix('DT_') for n in names)}"
            case = dataclasses.replace(anchor, inputs=retyped, label=label)
            shaped = _shaped(loaded, ascendc, case)
            at = f"{op_type} on its definition's row {label}"
            if shaped is None:
                self.notes.append(f"{at} not run (its C++ InferShape refuses it)")
                continue
            tried += 1
            sized_by = ("its C++ InferShape", f" {inference_of.infer_shape}, as GE would,")
            if not self.one(op_type, shaped, "rows", at, sized_by, certain=False):
                return

    def own(self, op_type: str) -> None:
        """The op type's own host-test cases (the smallest :data:`OWN` up to
        :data:`ELEMENTS`, no empty tensor among their inputs), outputs as its C++
        InferShape makes them, as GE would."""
        ascendc = self.engines[op_type]
        inference_of, root = self.known[op_type]
        loaded = nodes.compiled(inference_of, root)
        if isinstance(loaded, str):
            self.notes.append(f"{op_type}: its own host tests not run (its C++ {loaded})")
            return
        cann_op = definition_rows(self.library, inference_of, op_type)
        tiled = ascendc.sources.tiling  # there is one: the engine runs none without
        tests = (ut_cases.folder_of(s) for s in (tiled.sources[:1] if tiled else ()))
        own = ut_cases.cases(cann_op, ascendc.sources.root, *tests)
        sized_by = ("its C++ InferShape", f" {inference_of.infer_shape}, as GE would,")
        for case in [c for c in own if ut_cases.elements(c) <= ELEMENTS and _filled(c)][:OWN]:
            at = f"{op_type} on its own test's case {case.label}"
            shaped = _shaped(loaded, ascendc, case)
            if shaped is None:
                self.notes.append(f"{at} not run (its C++ InferShape refuses it)")
            elif not self.one(op_type, shaped, "own", at, sized_by, certain=False):
                return

    def close(self) -> None:
        for ascendc in self.engines.values():
            ascendc.close()


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


def _filled(case: tiling.Case) -> bool:
    """Whether every input of ``case`` holds elements: an own test of an empty tensor
    checks a path that launches no kernel (and is often another chip's)."""
    return all(0 not in g.shape for instances in case.inputs for g in instances)


def _shaped(loaded, ascendc: AscendcOp, case: tiling.Case) -> tiling.Case | None:
    """``case`` with its outputs as GE makes them for the kernel: shaped by the op's C++
    InferShape, typed by its InferDataType, else by the definition's row of the case's
    input dtypes, else as the case has them; None where the C++ refuses the case."""
    counts = case.output_counts or len(case.outputs)
    op_type = ascendc.ir.op_type
    try:
        answer = loaded.infer(
            op_type, [list(i) for i in case.inputs], list(case.attrs), counts, chip=ascendc.chip
        )
    except (infer.Crashed, KeyError):
        return None
    if answer.shape_status != 0 or len(answer.shapes) < len(case.outputs):
        return None
    undefined = types.DTYPES["DT_UNDEFINED"].value
    inferred = answer.dtypes if answer.dtype_status == 0 else ()
    rows = _row_dtypes(ascendc.ir, case)
    outputs = tuple(
        Given(
            inferred[i]
            if i < len(inferred) and inferred[i] != undefined
            else rows[i] or given.dtype,
            answer.shapes[i],
        )
        for i, given in enumerate(case.outputs)
    )
    return dataclasses.replace(case, outputs=outputs, chip=ascendc.chip)


def _row_dtypes(ir, case: tiling.Case) -> list[int | None]:
    """Per output of ``case``, its dtype in the definition's first row holding the case's
    input dtypes (None each: no such row, a definition of sets, or outputs that are a
    list's instances)."""
    none: list[int | None] = [None] * len(case.outputs)
    declared = dict(ir.dtypes)
    if ir.dtype_sets or len(case.outputs) != len(ir.outputs):
        return none
    given = {
        i.name: types.BY_GE_VALUE[g[0].dtype].ge
        for i, g in zip(ir.inputs, case.inputs, strict=True)
        if g
    }
    for row in range(max((len(d) for d in declared.values()), default=0)):
        at = {n: d[row % len(d)] for n, d in declared.items()}
        if all(at.get(n, d) == d for n, d in given.items()):
            return [types.DTYPES[at[o.name]].value if o.name in at else None for o in ir.outputs]
    return none


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
