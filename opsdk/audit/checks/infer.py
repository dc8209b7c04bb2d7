"""Check ``infer``: the Meta function against the C++ InferShape / InferDataType of each
CANN op its converter lowers to, from the ``--ir`` projects (:mod:`opsdk.cann.infer`).

On an NPU host GE runs the C++ on every node when it compiles the graph (a symbolic dim
is -1: ``dynamic`` mode) and when it runs it (real sizes: ``static`` mode), and the
kernel's outputs are sized by it; TorchAir traced the graph with the Meta function. So
each case is lowered as the converter check lowers it, and every GE node whose op type
has an InferShape in the projects is inferred on the node's own inputs and attrs and held
to what TorchAir traced for its outputs (:func:`opsdk.cann.infer.compare.disagreements`).

A finding is certain: where the audit cannot give the C++ what GE would (a value-depend
input's data, an attr the node leaves unset that the definition gives no default, a
node whose definition is unknown) or the C++ does not compile, the node is not checked,
said in a note; a case the C++ refuses is a finding only when TorchAir declares it (a
derived case may be one the op never takes), else a note.
"""

from __future__ import annotations

from opsdk._runtime import spec, types
from opsdk.audit import inference
from opsdk.audit.checks import Undecided, first_call, where
from opsdk.audit.checks.converter import lower, why_not_lowered
from opsdk.cann.infer.compare import disagreements
from opsdk.harness.cell import CellFailure
from opsdk.harness.columns import infer_nodes as nodes
from opsdk.harness.variants.cases import cases

__all__ = ["check"]

_CARRIERS = ("DT_UINT8", "DT_INT8", "DT_INT32")


def check(library, audit_op, shapes: str) -> list[str]:
    if not audit_op.cases:
        raise Undecided(audit_op.no_case)
    known = inference.index(library.infer_roots)
    notes, met, held = [], set(), set()
    for case in cases(spec.of(audit_op.op), shapes, "ge"):
        try:
            concrete = lower(audit_op.op, first_call(case), shapes)
        except Exception as err:  # noqa: BLE001 - the converter check reports it
            notes.append(f"case {case.label}: not lowered ({why_not_lowered(err)})")
            continue
        for node in (n for n in concrete.graph.op if n.type in known):
            met.add(node.type)
            note = _node(library, audit_op, case, node, *known[node.type], shapes)
            notes += [note] if note else []
            held |= set() if note else {node.type}
    if not held:
        none = [] if met else ["no GE node it lowers to has a C++ InferShape in the --ir paths"]
        raise Undecided("; ".join(none + notes))
    return [f"held to the C++ inference of {', '.join(sorted(held))}", *notes]


def _node(library, audit_op, case, node, inference, root, shapes: str) -> str:
    """Hold one node to its op type's C++: raises a finding, or returns why it is not
    checked ("" when it is)."""
    at = f"case {case.label}: GE node {node.name} ({node.type}) not checked"
    cann_op = library.reg_op(node.type)
    if cann_op is None:
        return f"{at}: no definition of {node.type} gives its attrs' order"
    ir = cann_op.ir
    slots = nodes.instances(ir, node)
    depend = [i.name for i, fed in zip(ir.inputs, slots, strict=True) if i.value_depend and fed]
    if depend:
        return f"{at}: its C++ reads value-depend inputs {depend}, whose data an audit has not"
    attrs = [nodes.attr(node, a) for a in ir.attrs]
    unset = [a.name for a, v in zip(ir.attrs, attrs, strict=True) if v is None]
    if unset:
        return f"{at}: attrs {unset} are unset and {library.definition(node.type)} gives no default"
    loaded = nodes.compiled(inference, root)
    if isinstance(loaded, str):
        return f"{at}: {loaded}"
    given = [[nodes.given(node.input_desc[i]) for i in instances] for instances in slots]
    traced = [nodes.traced(d) for d in node.output_desc]
    answer = loaded.infer(ir.op_type, given, attrs, len(node.output_desc), node.name)
    found = disagreements(
        answer,
        [shape for shape, _ in traced],
        [dtype for _, dtype in traced],
        compile=shapes != "static",
        other="Meta function",
    )
    carried = [p for p in found if _carried(p)]
    found = [p for p in found if p not in carried]
    if any(p.kind == "failed" for p in found) and audit_op.origin != "declared":
        return f"{at}: its C++ refuses this case, which TorchAir does not declare ({found[0]})"
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
    if carried:
        return f"{at}: its outputs' dtypes {[str(p) for p in carried]} are carried in another"
    return ""


def _carried(problem) -> bool:
    """A dtype torch lacks (or a float8) that the Meta function carries in an integer one
    (torch_npu's uint8 for float8_e8m0, int32 for packed int4): a convention, no defect."""
    if problem.kind != "dtype" or problem.fake not in _CARRIERS:
        return False
    row = types.DTYPES.get(problem.cpp)
    return row is None or row.torch is None or row.torch.startswith("float8")
