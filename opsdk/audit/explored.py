"""The audit's exploration of an op's input space (:mod:`opsdk.cann.explore`): its Meta
function held to the C++ of the GE node it lowers to on hundreds of cases of that node's
CANN definition, beyond the declared ones.

The torch op's arguments are bound to the node's IR inputs by the graph TorchAir built
for the first case: an input fed by the graph's Data ``index`` (through ``TensorMove`` /
``Identity``) is that tensor argument; an attr is the argument of its name. What no
argument binds stays as the node has it (an attr at the node's value, an optional input
left out; a bound attr varies from the node's value); an attr the converter sets from an
argument of another name (``num_groups=group``) is that argument. A required input no
argument feeds (a constant the converter makes) leaves the op unexplored, said in a
note. The node's own case is the exploration's anchor: its shapes, valid for the op,
vouch for the definition's other dtype rows at them (a norm's mixed rows).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
from pathlib import Path

from opsdk._runtime import spec
from opsdk.cann import explore, infer
from opsdk.cann.explore.cases import Case
from opsdk.cann.explore.torch_side import TorchOp, Unbound
from opsdk.errors import SpecError
from opsdk.harness.core import infer_nodes as nodes
from opsdk.offline.ge.proto import decode_attr

__all__ = ["explored"]

_KEEPS_SHAPE = ("TensorMove", "Identity")


def explored(
    audit_op, call, graph: dict, node, cann_op, inference, library, moot
) -> tuple[list, str, bool]:
    """The findings (lines) of exploring ``node`` (of ``cann_op``'s type, lowered from
    ``call``), a note ("" when none) and whether both sides agreed on a case;
    ``moot(problem, answer)``: a convention, no defect."""
    cases = explore.budget()
    if not cases:
        return [], "", False
    op_spec = spec.of(audit_op.op)
    bound = _fed(op_spec, call, graph, node)
    names = {arg: ir_name for ir_name, arg in bound.items()}
    given = op_spec.by_name(call.args, call.kwargs)
    names.update(_renamed(audit_op.converter, given, node))
    # a dtype attr keeps the call's value on the torch side (torch_npu numbers dtypes its
    # own way: 296 where the node's attr says GE's 40) and the node's on the C++ side
    typed = {a.name for a in cann_op.ir.attrs if a.dtype}
    fixed = {
        a.name: given.get(a.name, a.default)
        for a in op_spec.args
        if not a.is_tensor and names.get(a.name, a.name) in typed
    }
    # every attr as the node has it (the converter's value); those an argument binds vary
    attrs = tuple(dataclasses.replace(a, default=nodes.attr(node, a)) for a in cann_op.ir.attrs)
    ir = dataclasses.replace(cann_op.ir, arg_names=names, attrs=attrs, fixed_args=fixed)
    try:
        side = TorchOp(audit_op.op, ir, device="npu")
    except SpecError as err:
        # the binding is the converter's: a library's note, nothing for the user to name
        how = ", by name or as the converter feeds it" if isinstance(err, Unbound) else ""
        return [], f"{node.type}: not explored ({err}{how})", False
    unfed = [i.name for i in ir.inputs if i.kind != "optional" and i.name not in side.inputs]
    if unfed:
        return [], f"{node.type}: not explored (inputs {unfed} are made by the converter)", False
    own = _as_traced(side, ir, node)
    if own is None:
        why = "the op's outputs are not the node's, in order"
        return [], f"{node.type}: not explored ({why})", False
    result = explore.hold(
        dataclasses.replace(cann_op, ir=ir),
        library,
        inference,
        side,
        chip=infer.chip(cann_op.chips),
        fake_at=str(audit_op.meta or ""),
        cases=cases,
        pinned=side.pinned,
        moot=moot,
        anchors=(own,),
    )
    cost = "cached" if result["cached"] else f"{result['seconds']:.1f} s"
    said = f"{node.type}: explored {result['cases']} cases ({cost}): {result['kinds']}"
    if result["stricter"]:
        said += "; the Meta function is stricter than the C++: " + "; ".join(result["stricter"])
    return result["findings"], said, result["kinds"].get("agree", 0) > 0


def _as_traced(side: TorchOp, ir, node) -> Case | None:
    """The node's own inputs and attrs as a case, if the fake asked it returns what
    TorchAir traced for the node's outputs, in order (the binding holds); else None."""
    inputs = []
    for spec_input, slots in zip(ir.inputs, nodes.instances(ir, node), strict=True):
        descs = [node.input_desc[i] for i in slots if node.input[i]]
        if any(not d.HasField("shape") for d in descs) or spec_input.name in side.pinned:
            if descs:
                return None
        inputs.append([nodes.given(d) for d in descs])
    case = explore.case_of(inputs, [nodes.attr(node, a) for a in ir.attrs])
    try:
        said = side.fake(case)
    except Exception:  # noqa: BLE001 - any refusal: the binding does not hold
        return None
    traced = [nodes.traced(d) for d in node.output_desc]
    holds = len(said) == len(traced) and all(
        s == t or t[0] is None for s, t in zip(said, traced, strict=True)
    )
    return case if holds else None


def _fed(op_spec, call, graph: dict, node) -> dict[str, str]:
    """IR input name -> the torch tensor argument the graph feeds it from."""
    tensors = [a.name for a in op_spec.args if a.is_tensor and not a.is_list]
    given = op_spec.by_name(call.args, call.kwargs)
    order = [name for name in tensors if given.get(name) is not None]
    fed = {}
    for desc, ref in zip(node.input_desc, node.input, strict=False):
        while ref:
            name, _, index = ref.rpartition(":")
            producer = graph.get(name)
            if producer is None:
                break
            if producer.type == "Data" and "index" in producer.attr:
                at = producer.attr["index"].i
                if 0 <= at < len(order):
                    fed[desc.name] = order[at]
                break
            ref = producer.input[0] if producer.type in _KEEPS_SHAPE and producer.input else ""
    return fed


def _renamed(converter, given: dict, node) -> dict[str, str]:
    """Argument name -> attr name, for each attr the converter sets from an argument of
    another name (``ge.GroupNormSilu(..., num_groups=group)``) whose value the node
    carries unchanged; {} without the converter's source."""
    if converter is None:
        return {}
    passed = _passed(converter.path, converter.line, node.type)
    return {
        arg: attr
        for arg, attr in passed.items()
        if arg != attr and attr in node.attr and _same_value(given.get(arg), node, attr)
    }


def _same_value(value, node, attr: str) -> bool:
    held = decode_attr(node.attr[attr])
    if isinstance(value, float) and isinstance(held, float):
        return math.isclose(value, held, rel_tol=1e-6)
    return value is not None and value == held


@functools.cache
def _passed(path: str, line: int, op_type: str) -> dict[str, str]:
    """Parameter -> keyword of each ``ge.<op_type>(..., keyword=parameter)`` in the
    converter function defined at ``path:line``."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        first = min([d.lineno for d in function.decorator_list] + [function.lineno])
        if not first <= line <= (function.end_lineno or first):
            continue
        params = {a.arg for a in function.args.args + function.args.kwonlyargs}
        return {
            keyword.value.id: keyword.arg
            for call in ast.walk(function)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == op_type
            for keyword in call.keywords
            if keyword.arg and isinstance(keyword.value, ast.Name) and keyword.value.id in params
        }
    return {}
