"""An audited op's cases: TorchAir's own ``declare_supported`` where its converter has
them (or an op package's own specs), else derived, said so: one per dtype row of the op's
``--ir`` definition (as ``opsdk new --from-cann`` writes them), else one from the schema
(opsdk's spec generator) with, per optional input it gives, one case more leaving it out.

TorchAir's ``Support(F32(2, 2), ...)`` becomes opsdk's ``Support`` of the same sizes
and dtypes; a case opsdk cannot express (a tensor of given values, ``T(...)``), one
whose tensors exceed :data:`MAX_BYTES` in its largest call, or one that does not fit the
schema is left out. When the Meta function refuses the first case,
:mod:`opsdk.audit.search` changes it. Each case is registered as the op's declaration,
so the harness's input generator (:func:`opsdk.harness.variants.cases.cases`) makes its
calls, growing sizes in dynamic mode as it does for ``opsdk check``.
"""

from __future__ import annotations

import contextlib
import math

from opsdk._runtime import inputs, spec
from opsdk._runtime.inputs import default_support
from opsdk.cann.specs import GIVEN as _GIVEN
from opsdk.errors import SpecError
from opsdk.harness.variants.cases import STEPS

__all__ = [
    "MAX_BYTES",
    "MAX_CASES",
    "MAX_LEFT_OUT",
    "attach",
    "declared_as",
    "from_definition",
    "from_torchair",
    "held_to",
    "rebuilt",
]

MAX_CASES = 2  # per op: the first cases TorchAir declares (the sweep's cost grows with each)
# A case's tensors at most, in its largest call: dynamic mode grows every size of the
# declared one (TensorSpec.sizes), a 4-D tensor ~100x by its third call, and memory and
# time grow with them (npu_rotary_mul's 48 MiB case took 12 GB).
MAX_BYTES = 2**30


class _Inexpressible(Exception):
    pass


def _tensor(value):
    if value.value is not None:
        raise _Inexpressible("a tensor of given values (T(...))")
    return inputs.TensorSpec(tuple(value.dims), value.dtype, value.value_range)


def _value(value):
    from torchair._ge_concrete_graph.supported_declaration import _TypedTensor

    if isinstance(value, _TypedTensor):
        return _tensor(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, _TypedTensor) for v in value):
        return [_tensor(v) for v in value]
    return value


def _bytes(support) -> int:
    """What the tensors of ``support`` take in its largest call (dynamic mode's last)."""
    tensors = [
        t
        for v in (*support.args, *support.kwargs.values())
        for t in (v if isinstance(v, list) else [v])
        if isinstance(t, inputs.TensorSpec)
    ]
    step = max(STEPS["dynamic"])
    return sum(math.prod(t.sizes(step)) * t.dtype.itemsize for t in tensors)


def from_torchair(supports) -> tuple[list, str]:
    """opsdk ``Support`` s for TorchAir's, and why any was left out ("" when none was)."""
    made, left = [], ""
    for support in supports:
        try:
            made.append(
                inputs.Support(
                    *(_value(a) for a in support.args),
                    **{k: _value(v) for k, v in support.kwargs.items()},
                )
            )
        except (_Inexpressible, SpecError) as err:
            left = f"a declared case was left out: {err}"
            continue
        size = _bytes(made[-1])
        if size > MAX_BYTES:
            made.pop()
            left = (
                f"a declared case was left out: its tensors take {size / 2**20:.0f} MiB in "
                f"its largest call (dynamic mode grows them), over the audit's "
                f"{MAX_BYTES // 2**20} MiB"
            )
    return made, left


def _declared(op):
    from torchair._ge_concrete_graph.fx2ge_converter import _declare_supported_converters

    converter = _declare_supported_converters().get(op)
    return getattr(converter, "supported_cases", None)


def attach(audit_op, definitions=None, infer_roots=()) -> None:
    """Give ``audit_op`` its cases and register them as its declaration: TorchAir's that
    fit the schema (at most :data:`MAX_CASES`), else derived: from the dtype rows of the
    op's CANN definition among ``definitions`` (``--ir``: op type -> ``CannOp``; held to
    its C++ InferShape among ``infer_roots``), else from the schema. ``left`` says why
    any declared case was left out."""
    op = audit_op.op
    declared = _declared(op)
    supports, audit_op.left = from_torchair(declared) if declared else ([], "")
    own = inputs.declared(audit_op.qualname)  # an op package's specs.py
    if not supports and own is not None:
        supports = list(own.cases)
    audit_op.cases, why = _fitting(op, supports[:MAX_CASES])
    audit_op.left = audit_op.left or why
    audit_op.origin = "declared"
    if not audit_op.cases:
        defined = from_definition(op, definitions or {}, held_to(infer_roots))
        audit_op.cases, _ = _fitting(op, defined[:MAX_CASES])
        audit_op.origin = "defined"
    if not audit_op.cases:
        audit_op.origin = "derived"
        try:
            derived = [default_support(spec.of(op))]
        except Exception as err:  # noqa: BLE001 - any schema opsdk cannot derive a case of
            audit_op.no_case = f"no case: TorchAir declares none and none derives ({err})"
            return
        audit_op.cases, why = _fitting(op, derived + _left_out(op, derived[0]))
        if not audit_op.cases:
            audit_op.no_case = f"no case: {audit_op.left or why}; the derived one: {why}"
            return
    # each was checked against the schema alone; now all are the op's
    inputs.redeclare(op, audit_op.cases, non_contiguous=False)


MAX_LEFT_OUT = 2  # derived cases more, each with one optional input left out


def _left_out(op, support) -> list:
    """``support`` with one optional tensor it gives left out, per such input (at most
    :data:`MAX_LEFT_OUT`): a converter or Meta function that mishandles an absent input
    meets one only then (a derived case gives them all)."""
    op_spec = spec.of(op)
    values = op_spec.by_name(support.args, support.kwargs)
    given = [a for a in op_spec.tensor_args if a.is_optional and values.get(a.name) is not None]
    return [rebuilt(op_spec, values | {a.name: None}) for a in given[:MAX_LEFT_OUT]]


def rebuilt(op_spec, values: dict):
    """A ``Support`` of argument ``values`` by name (positional ones in order)."""
    args = [values[a.name] for a in op_spec.args if not a.kwarg_only and a.name in values]
    kwargs = {a.name: values[a.name] for a in op_spec.args if a.kwarg_only and a.name in values}
    return inputs.Support(*args, **kwargs)


def held_to(infer_roots):
    """``inference(cann_op)``: the C++ inference of ``cann_op``'s type among
    ``infer_roots`` (``--ir`` paths), ``(Inference, root)`` or None."""
    from opsdk.audit import inference

    known = inference.index(tuple(infer_roots)) if infer_roots else {}
    return lambda cann_op: known.get(cann_op.ir.op_type)


def from_definition(op, definitions: dict, inference=lambda cann_op: None) -> list:
    """One case per dtype row of ``op``'s CANN definition, as ``opsdk new --from-cann``
    writes them (:mod:`opsdk.cann.specs`), held as it holds them to the op's C++
    InferShape where ``inference(cann_op)`` finds one (:func:`held_to`): no case the C++
    refuses fails a cell; [] when no definition is the op's.
    The op's is the one of its own type (``my_op``: ``MyOp``), else the one definition
    whose inputs are the schema's tensor arguments, by name."""
    from opsdk.cann import specs as cann_specs
    from opsdk.scaffold.cann_infer import acceptor

    op_spec = spec.of(op)
    tensors = {a.name for a in op_spec.args if a.is_tensor}
    named = [c for c in definitions.values() if set(c.ir.ir_input_names) == tensors]
    cann_op = definitions.get(spec.camel_case(op_spec.name))
    if cann_op is None or not tensors <= set(cann_op.ir.ir_input_names):
        cann_op = named[0] if len(named) == 1 else None
    if cann_op is None:
        return []
    found = inference(cann_op)
    accepts = acceptor(found, cann_op.ir, cann_op) if found is not None else None
    try:
        sources = cann_specs.cases(op_spec, cann_op.ir, cann_op, accepts)
    except SpecError:  # no row torch computes with
        return []
    # the case with optional inputs given second: the first MAX_CASES have them absent
    # (a row) and present
    ordered = sorted(sources, key=lambda source: (source is not sources[0], _GIVEN not in source))
    namespace = vars(inputs)  # F16, Support...: the names specs.py imports
    return [eval(source, namespace) for source in ordered]  # noqa: S307 - opsdk's own text


def _fitting(op, supports) -> tuple[list, str]:
    """Those of ``supports`` that fit ``op``'s schema, and why one did not."""
    fit, why = [], ""
    for support in supports:
        try:
            inputs.redeclare(op, [support], non_contiguous=False)
        except SpecError as err:
            why = f"a declared case does not fit the schema: {err}"
            continue
        fit.append(support)
    return fit, why


@contextlib.contextmanager
def declared_as(audit_op, supports):
    """``audit_op``'s cases are ``supports`` while the block runs (those that fit its
    schema), its own again after: a check that runs more cases than the others."""
    fit, _ = _fitting(audit_op.op, supports)
    try:
        if fit:
            inputs.redeclare(audit_op.op, fit, non_contiguous=False)
        yield fit
    finally:
        inputs.redeclare(audit_op.op, audit_op.cases, non_contiguous=False)
