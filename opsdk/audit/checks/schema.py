"""Check ``schema``: the in-place/functional pairs npugraph_ex's reinplace pass
registers agree with their schemas, and the schema's aliasing with the Meta function.

The reinplace pass (``register_inplaceable_npu_op(functional, inplace, mutated_arg)``)
rewrites the functional op into the in-place one, writing the arguments at
``mutated_arg``: the in-place schema must mark exactly those ``Tensor(a!)``, and the
functional one return the in-place op's outputs plus one per written argument. A return
the schema aliases to an input (``-> Tensor(a!)``) must be that input in the Meta
function's result, and no other return may alias an input.
"""

from __future__ import annotations

import torch

from opsdk.audit.checks import Undecided, fake_outputs, fakeable, first_call, host_args, where
from opsdk.harness.cell import CellFailure
from opsdk.harness.failures import first_line

__all__ = ["check", "check_aliasing", "check_pairs"]


def check(library, op, shapes: str) -> list[str]:
    check_pairs(library, op)
    return check_aliasing(op) + host_args.notes(op.op)


def _schema(namespace: str, name: str):
    packet = getattr(getattr(torch.ops, namespace), name, None)
    return (
        packet.default._schema if packet is not None and "default" in packet.overloads() else None
    )


def check_pairs(library, op) -> None:
    """The reinplace pairs naming ``op`` (functional or in-place) against both schemas."""
    namespace, name = op.op._schema.name.split("::")
    for functional, inplace, mutated, source in library.pairs:
        if name not in (functional, inplace) or op.op._overloadname != "default":
            continue
        fs, ins = _schema(namespace, functional), _schema(namespace, inplace)
        missing = [n for n, s in ((functional, fs), (inplace, ins)) if s is None]
        if missing:
            raise CellFailure(
                "schema",
                f"the reinplace pass registers {functional} -> {inplace}{where(source)}, but "
                f"{', '.join(missing)} has no schema: define it, or drop the registration",
            )
        written = [i for i, a in enumerate(ins.arguments) if a.alias_info and a.alias_info.is_write]
        if sorted(written) != sorted(mutated):
            raise CellFailure(
                "schema",
                f"the reinplace pass writes arguments {list(mutated)} of {inplace}{where(source)}, "
                f"its schema marks {written} Tensor(a!): make them agree",
            )
        fresh = [r for r in ins.returns if r.alias_info is None]
        if len(fs.returns) != len(fresh) + len(mutated):
            raise CellFailure(
                "schema",
                f"{functional} returns {len(fs.returns)} tensors; the reinplace pass"
                f"{where(source)} takes it for {inplace}'s {len(fresh)} outputs plus its "
                f"{len(mutated)} written arguments ({len(fresh) + len(mutated)}): make the "
                "functional schema return them",
            )


def check_aliasing(op) -> list[str]:
    """Each return the schema aliases to an input is that input in the Meta function's
    result; no other return aliases an input."""
    schema = op.op._schema
    if op.untraceable or not fakeable(op.op):  # nothing to hold the returns to
        said = op.untraceable or "it has no fake (Meta) function (the fake check's finding)"
        return [f"returns' aliasing not checked: {said}"]
    if not op.cases:
        raise Undecided(op.no_case)
    from opsdk._runtime import spec
    from opsdk.harness.variants.cases import cases

    [case, *_] = cases(spec.of(op.op), "static", "eager")
    try:
        out, args, kwargs = fake_outputs(op.op, first_call(case))
    except Exception as err:  # noqa: BLE001 - any refusal: the case proves nothing
        return [f"the Meta function refuses case {case.label}: {first_line(err)}"]
    outs = out if isinstance(out, (tuple, list)) else (out,)
    bound = dict(zip([a.name for a in schema.arguments], args, strict=False)) | kwargs
    inputs = [v for v in bound.values() if isinstance(v, torch.Tensor)]
    for i, (ret, value) in enumerate(zip(schema.returns, outs, strict=False)):
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
            continue  # a sparse result holds its inputs by design: nothing to compare
        if ret.alias_info is not None and ret.alias_info.before_set:
            arg = next(
                (
                    a
                    for a in schema.arguments
                    if a.alias_info and a.alias_info.before_set == ret.alias_info.before_set
                ),
                None,
            )
            source = bound.get(arg.name) if arg is not None else None
            if arg is not None and source is not None and value is not source:
                raise CellFailure(
                    "schema",
                    f"{op.qualname} return {i} is {arg.name} itself in its schema"
                    f"{where(op.schema_at)}, but the Meta "
                    f"function{where(op.meta)} returns a new tensor: return {arg.name} itself",
                )
        elif any(torch._C._is_alias_of(value, t) for t in inputs):  # type: ignore[attr-defined]
            raise CellFailure(
                "schema",
                f"{op.qualname} return {i} aliases an input in the Meta function{where(op.meta)}, "
                f"but the schema{where(op.schema_at)} declares a new tensor ({ret.type}): return "
                "a new tensor, or "
                "annotate the alias in the schema",
            )
    return []
