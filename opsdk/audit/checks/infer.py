"""Check ``infer``: the Meta function against the C++ InferShape / InferDataType of each
CANN op its converter lowers to, from the ``--ir`` projects (:mod:`opsdk.cann.infer`).

On an NPU host GE runs the C++ on every node when it compiles the graph (a symbolic dim
is -1: ``dynamic`` mode) and when it runs it (real sizes: ``static`` mode), and the
kernel's outputs are sized by it; TorchAir traced the graph with the Meta function. So
each case is lowered as the converter check lowers it, and every GE node whose op type
has an InferShape in the projects is inferred on the node's own inputs and attrs and held
to what TorchAir traced for its outputs (:func:`opsdk.cann.infer.disagreements.disagreements`).
In ``static`` mode the dtype rows of the definition beside the C++ run too (:data:`ROWS`).

A finding is certain: where the audit cannot give the C++ what GE would (a value-depend
input's data, an attr unset with no default, an input TorchAir leaves undescribed, inputs
or attrs the definition beside the C++ does not name) or the C++ does not compile or
load, the node is not checked, said in a note; so are a dtype torch_npu carries in
another and an output the C++ leaves rank 0. A case the C++ refuses is a finding only
when TorchAir declares it (a derived case may be one the op never takes), else a note.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from pathlib import Path

from opsdk import cann
from opsdk._runtime import spec, types
from opsdk._runtime.inputs import Support
from opsdk.audit import cases as audit_cases
from opsdk.audit import inference, prototypes
from opsdk.audit.checks import Undecided, first_call, where
from opsdk.audit.checks.converter import lower, why_not_lowered
from opsdk.audit.explored import explored
from opsdk.cann import files, infer
from opsdk.cann.infer.disagreements import disagreements
from opsdk.errors import OpsdkError
from opsdk.harness.cell import CellFailure
from opsdk.harness.core import infer_nodes as nodes
from opsdk.harness.variants.cases import cases

__all__ = ["ROWS", "check", "definition_rows", "given_to", "lowered"]

ROWS = 8  # definition dtype rows a static cell runs beside the audit's own cases

_CARRIERS = ("DT_UINT8", "DT_INT8", "DT_INT32")
_KEEPS_SHAPE = ("TensorMove", "Identity")


def check(library, audit_op, shapes: str) -> list[str]:
    if not audit_op.cases:
        raise Undecided(audit_op.no_case)
    known = inference.index(library.infer_roots)
    notes: list[str] = []
    met, held, ran = set(), set(), [0, 0]
    first: dict[str, tuple] = {}  # op type -> (call, graph, node): where exploring starts

    def hold(case_list, declared: bool, kind: int) -> None:
        """Hold each case's nodes; ``kind`` counts it as the audit's own (0) or a row (1)."""
        for case in case_list:
            ran[kind] += 1
            for call, graph, node in lowered(audit_op, case, shapes, known, notes):
                met.add(node.type)
                checked, note = _node(
                    library, audit_op, case, graph, node, *known[node.type], shapes, declared
                )
                notes.extend([note] if note else [])
                held.update([node.type] if checked else [])
                first.setdefault(node.type, (call, graph, node))

    op_spec = spec.of(audit_op.op)
    hold(cases(op_spec, shapes, "ge"), audit_op.origin == "declared", 0)
    rows = _row_cases(audit_op, met, known) if shapes == "static" else []
    if rows:  # the definition's other dtype rows (mixed ones too), at the ranks it allows
        with audit_cases.declared_as(audit_op, rows) as fit:
            hold(cases(op_spec, shapes, "ge") if fit else [], False, 1)
    if shapes == "static":  # once an op: the exploration's cases are GE's run-time ones
        # a node its cases could not hold (the C++ refuses a derived case) may be held on
        # the cases the exploration finds both sides accept
        more, agreed = _explored(library, audit_op, known, dict(sorted(first.items())))
        notes, held = notes + more, held | agreed
    if not held:
        none = [] if met else ["no GE node it lowers to has a C++ InferShape in the --ir paths"]
        raise Undecided("; ".join(none + notes))
    said = f"held to the C++ inference of {', '.join(sorted(held))} on {sum(ran)} cases"
    return [f"{said} ({ran[1]} of its definition's dtype rows)" if ran[1] else said, *notes]


def _explored(library, audit_op, known, starts: dict) -> tuple[list[str], set[str]]:
    """Explore each met node's input space (:mod:`opsdk.audit.explored`): raises the
    findings, returns notes and the op types held on a case both sides accepted."""
    notes, found, agreed = [], [], set()
    for op_type, (call, graph, node) in starts.items():
        inference, root = known[op_type]
        cann_op = _with_rows(_beside_op(inference, op_type), inference)
        loaded = nodes.compiled(inference, root)
        if cann_op is None or isinstance(loaded, str):
            continue
        lines, note, agree = explored(
            audit_op, call, graph, node, cann_op, inference, loaded, _moot
        )
        found += lines
        notes += [note] if note else []
        agreed |= {op_type} if agree else set()
    if found:
        raise CellFailure(
            "infer",
            f"the Meta function{where(audit_op.meta)} disagrees with the C++ inference beyond "
            f"the declared cases: {'; '.join(found)}",
        )
    return notes, agreed


def _node(library, audit_op, case, graph, node, inference, root, shapes: str, declared: bool):
    """Hold one node to its op type's C++ (``declared``: the case is TorchAir's): raises
    a finding, or returns whether it was held and a note ("": none)."""
    at = f"case {case.label}: GE node {node.name} ({node.type}) not checked"
    fed = given_to(library, inference, graph, node)
    if isinstance(fed, str):
        return False, f"{at}: {fed}"
    ir, given, attrs = fed
    loaded = nodes.compiled(inference, root)
    if isinstance(loaded, str):  # the same for every node of the type: one note of it
        return False, f"GE nodes {node.type} not checked ({loaded})"
    outputs = len(node.output_desc)
    answer = loaded.infer(ir.op_type, given, attrs, outputs, node.name)
    if answer.outputs_asked > outputs:
        asked = answer.outputs_asked
        return False, f"{at}: its C++ asks for {asked} outputs, the node has {outputs}"
    # outputs the C++ never asks for (an optional one an attr turns off) are not its
    asked = answer.outputs_asked if answer.shape_status == 0 else outputs
    traced = [nodes.traced(d) for d in node.output_desc[:asked]]
    found = disagreements(
        answer,
        [shape for shape, _ in traced],
        [dtype for _, dtype in traced],
        compile=shapes != "static",
        other="Meta function",
    )
    moot = [p for p in found if _moot(p, answer)]
    found = [p for p in found if p not in moot]
    if any(p.kind == "failed" for p in found) and not declared:
        refused = f"its C++ refuses this case, which TorchAir does not declare ({found[0]})"
        return False, f"{at}: {refused}"
    if found:
        when = "compiles (symbolic dims -1)" if shapes != "static" else "runs"
        inputs = [[list(g.shape) for g in instances] for instances in given]
        said = "; ".join(
            f"{p} [C++ {inference.infer_dtype if p.kind == 'dtype' else inference.infer_shape}]"
            for p in found
        )
        raise CellFailure(
            "infer",
            f"case {case.label}: GE node {node.name} ({node.type}) as GE {when} it, inputs "
            f"{inputs}: {said}; the Meta function{where(audit_op.meta)} traced the graph: "
            "fix the side named likelier wrong",
        )
    if moot:  # the node's other outputs agree
        return True, (
            f"{at} on {[str(p) for p in moot]}: a dtype carried in another, or an output the "
            "C++ leaves rank 0 (unset, or a scalar: which, the audit cannot tell)"
        )
    return True, ""


def lowered(audit_op, case, shapes: str, known, notes: list):
    """``(call, graph, node)`` of each GE node of a type in ``known`` that the converter
    lowers ``case`` to in ``shapes`` mode (``graph``: its nodes by name); a case it does
    not lower is a line in ``notes`` (the converter check reports it)."""
    call = first_call(case)
    try:
        concrete = lower(audit_op.op, call, shapes)
    except Exception as err:  # noqa: BLE001 - the converter check reports it
        notes.append(f"case {case.label}: not lowered ({why_not_lowered(err)})")
        return
    graph = {n.name: n for n in concrete.graph.op}
    for node in (n for n in concrete.graph.op if n.type in known):
        yield call, graph, node


def given_to(library, inference, graph: dict, node):
    """What GE gives ``node``'s C++ (its InferShape, its TilingFunc): the definition
    beside the C++ (``inference``), per IR input its instances and the attrs in IR order;
    or why the audit cannot give it that (a line)."""
    ir = _definition(library, inference, node.type)
    why = _not_given(ir, node) if ir is not None else f"no definition of {node.type} is known"
    if why:
        return why
    fed = [[i for i in slots if node.input[i]] for slots in nodes.instances(ir, node)]
    given = [
        [g for i in instances if (g := _input(graph, node, i)) is not None] for instances in fed
    ]
    if list(map(len, given)) != list(map(len, fed)):
        return "an input's shape is not in the graph (GE infers it from its producer)"
    return ir, given, [nodes.attr(node, a) for a in ir.attrs]


def _not_given(ir, node) -> str:
    """Why the audit cannot give the C++ what GE would ("" when it can): inputs or attrs
    the definition beside the C++ does not name, a value-depend input's data (the audit
    reads no values), an attr unset with no default."""
    fed = [d.name for d, ref in zip(node.input_desc, node.input, strict=False) if ref]
    unnamed = [n for n in fed if nodes.ir_name(ir.inputs, n) not in ir.ir_input_names]
    unnamed += [k for k in node.attr if not k.startswith("_") and k not in ir.ir_attr_names]
    if unnamed:
        return f"the node's {unnamed} are not named by the definition beside the C++"
    slots = nodes.instances(ir, node)
    depend = [i.name for i, mine in zip(ir.inputs, slots, strict=True) if i.value_depend and mine]
    if depend:
        return f"its C++ reads value-depend inputs {depend}, whose data an audit has not"
    unset = [a.name for a in ir.attrs if nodes.attr(node, a) is None]
    if unset:
        return f"attrs {unset} are unset and the definition gives no default"
    return ""


def _definition(library, inference, op_type: str):
    """The IR of ``op_type`` beside its C++ (its op folder: the attrs' order the C++ reads
    them in), else the library's."""
    cann_op = _beside_op(inference, op_type) or library.reg_op(op_type)
    return cann_op.ir if cann_op is not None else None


def definition_rows(library, inference, op_type: str):
    """The ``CannOp`` of ``op_type`` as :func:`given_to` reads its node, with the dtype rows
    and chips of the OpDef beside its C++ where there is one; None if none is known."""
    return _with_rows(_beside_op(inference, op_type), inference) or library.reg_op(op_type)


def _beside_op(inference, op_type: str):
    """The ``CannOp`` of ``op_type`` defined in its C++'s op folder, None if none is."""
    found = _beside(inference.sources[0].resolve().parent.parent).get(op_type)
    return found.op if found is not None else None


def _row_cases(audit_op, op_types, known) -> list:
    """Cases of the dtype rows of the definitions beside the C++ of ``op_types`` (as
    ``opsdk new --from-cann`` writes them), but the audit's own, at most :data:`ROWS`."""
    found = []
    for op_type in sorted(op_types):
        cann_op = _with_rows(_beside_op(known[op_type][0], op_type), known[op_type][0])
        if cann_op is not None:
            found += audit_cases.from_definition(
                audit_op.op, {op_type: cann_op}, lambda _, at=known[op_type]: at
            )
    labels = {c.label for c in audit_op.cases}
    first: dict[str, Support] = {}  # each new label's first row
    for c in found:
        first.setdefault(c.label, c)
    return [c for label, c in first.items() if label not in labels][:ROWS]


def _with_rows(cann_op, inference):
    """``cann_op`` with the dtype rows of the OpDef beside its C++ (``op_host/``), which
    are the combinations its kernel takes (a norm's fp16 ``x`` with fp32 ``gamma``),
    where its definition is a ``REG_OP``, whose lists are sets; else as it is."""
    if cann_op is None or cann_op.rows:
        return cann_op
    opdef = _opdef(inference.sources[0].resolve().parent).get(cann_op.ir.op_type)
    names = [t.name for t in (*cann_op.ir.inputs, *cann_op.ir.outputs)]
    if opdef is None or sorted(opdef.dtypes) != sorted(names):
        return cann_op
    return dataclasses.replace(
        cann_op, dtypes=opdef.dtypes, formats=opdef.formats, rows=True, chips=opdef.chips
    )


@functools.cache
def _opdef(folder: Path) -> dict[str, cann.CannOp]:
    """The ops the OpDef sources of ``folder`` (an ``op_host``) define, by op type."""
    found: dict[str, cann.CannOp] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files.opdef_files(folder):
            try:
                found.update((op.ir.op_type, op) for op in cann.read(path, skip_unreadable=True))
            except OpsdkError:
                continue
    return found


@functools.cache
def _beside(folder: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return prototypes.read([folder])
        except OpsdkError:  # no definition there
            return {}


def _input(graph: dict, node, slot: int) -> infer.Given | None:
    """An input as GE has it at compile time: its descriptor, else what TorchAir traced for
    the output feeding it (through ``TensorMove`` / ``Identity``, which keep it: a
    descriptor TorchAir leaves unshaped has no dtype either); None when neither is in the
    graph."""
    desc = node.input_desc[slot]
    if desc.HasField("shape"):
        return nodes.given(desc)
    ref = node.input[slot]
    while ref:
        name, _, index = ref.rpartition(":")
        producer = graph.get(name)
        if producer is None or int(index) >= len(producer.output_desc):
            return None
        shape, dtype = nodes.traced(producer.output_desc[int(index)])
        if shape is not None and dtype is not None:
            return infer.Given(types.DTYPES[dtype].value, shape)
        ref = producer.input[0] if producer.type in _KEEPS_SHAPE and producer.input else ""
    return None


def _moot(problem, answer) -> bool:
    """A convention, no defect: a dtype carried in another (4-bit values packed in pairs
    into a byte type's halved last dim), or an output the C++ leaves rank 0."""
    return _carried(problem) or _unset(problem, answer) or _packed(problem, answer)


def _packed(problem, answer) -> bool:
    """A 4-bit output the Meta function packs two to a byte: its last dim half the C++'s,
    an odd one refused (a byte holds two)."""
    four = [_four_bits(dtype) for dtype in answer.dtypes]
    if problem.kind == "refused":
        shapes = zip(answer.shapes, four, strict=False)
        return any(bits and shape and shape[-1] % 2 for shape, bits in shapes)
    if problem.kind != "shape" or problem.output is None or problem.output >= len(four):
        return False
    if not four[problem.output]:
        return False
    cpp, fake = list(answer.shapes[problem.output]), problem.fake.strip("[]").split(",")
    fake = [int(d) for d in fake if d.strip()]
    return len(cpp) == len(fake) and cpp[:-1] == fake[:-1] and fake[-1] == (cpp[-1] + 1) // 2


def _four_bits(value: int) -> bool:
    row = types.BY_GE_VALUE.get(value)
    return row is not None and row.ge.startswith(("DT_FLOAT4", "DT_INT4"))


def _unset(problem, answer) -> bool:
    """An output the C++ leaves rank 0 where the Meta function's is not."""
    return (
        problem.kind == "shape"
        and problem.output is not None
        and answer.shapes[problem.output] == ()
    )


def _carried(problem) -> bool:
    """A dtype torch lacks (or a float8) that the Meta function carries in an integer one
    (torch_npu's uint8 for float8_e8m0, int32 for packed int4): a convention, no defect."""
    if problem.kind != "dtype":
        return False
    if (problem.fake, problem.cpp) == ("DT_INT64", "DT_UINT64"):  # torch computes no uint64
        return True
    if problem.fake not in _CARRIERS:
        return False
    row = types.DTYPES.get(problem.cpp)
    return row is None or row.torch is None or row.torch.startswith("float8")
