"""An audited op's cases: TorchAir's own ``declare_supported`` where its converter has
them, else one derived from the schema (opsdk's spec generator), said so.

TorchAir's ``Support(F32(2, 2), ...)`` becomes opsdk's ``Support`` of the same sizes
and dtypes; a case opsdk cannot express (a tensor of given values, ``T(...)``) is left
out. Each case is registered as the op's declaration, so the harness's input generator
(:func:`opsdk.harness.variants.inputs.cases`) makes its calls, growing sizes in dynamic
mode as it does for ``opsdk check``.
"""

from __future__ import annotations

from opsdk.errors import SpecError
from opsdk.harness.variants.inputs import default_support
from opsdk.runtime import inputs, spec

__all__ = ["MAX_CASES", "attach", "from_torchair"]

MAX_CASES = 2  # per op: the first cases TorchAir declares (the sweep's cost grows with each)


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
    return made, left


def _declared(op):
    from torchair._ge_concrete_graph.fx2ge_converter import _declare_supported_converters

    converter = _declare_supported_converters().get(op)
    return getattr(converter, "supported_cases", None)


def attach(audit_op) -> None:
    """Give ``audit_op`` its cases and register them as its declaration."""
    op = audit_op.op
    declared = _declared(op)
    supports, left = from_torchair(declared) if declared else ([], "")
    if supports:
        audit_op.origin = "declared"
    else:
        try:
            supports = [default_support(spec.of(op))]
        except Exception as err:  # noqa: BLE001 - any schema opsdk cannot derive a case of
            audit_op.no_case = f"no case: TorchAir declares none and none derives ({err})"
            return
        audit_op.origin = "derived"
    for support in supports[:MAX_CASES]:
        try:
            inputs.declare_supported(op, [support], non_contiguous=False)
        except SpecError as err:
            left = str(err)
            continue
        audit_op.cases.append(support)
    if audit_op.cases:  # each was checked against the schema alone; now all are the op's
        inputs.declare_supported(op, audit_op.cases, non_contiguous=False)
    else:
        audit_op.no_case = f"no case: {left or 'none fits the schema'}"
