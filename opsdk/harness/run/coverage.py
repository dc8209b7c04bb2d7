"""What each op has registered, read from the registries themselves.

The torch dispatcher (PrivateUse1 kernel), the fake-function registry,
TorchAir's converter registry and IR query (``_torchair.get_registered_ir_def``:
CANN on an NPU host, opsdk's ``ir.py`` registry offline) and opsdk's input-spec
registry are the source of truth, not the package's source text: an op counts
as covered when the running process can actually find each piece.

``opsdk coverage`` prints the table; the harness calls :func:`require` before
each cell, so a column fails up front, in the right layer, naming what is
missing and where to add it, instead of somewhere deep in TorchAir.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import torch

from opsdk._runtime import attach, inputs, irdef
from opsdk._runtime import spec as opspec
from opsdk._runtime.spec import OpSchema
from opsdk.errors import OpsdkError
from opsdk.harness import columns
from opsdk.harness.cell import CellFailure

# What each column needs is its Column.needs (opsdk.harness.columns).
# piece -> (layer a missing piece fails in, what is missing, where to add it)
_MISSING = {
    "kernel": (
        "eager",
        "no PrivateUse1 (npu) kernel",
        "register one in schema.py (register_kernel / Library.impl(..., 'PrivateUse1')) "
        "or with TORCH_LIBRARY_IMPL(ns, PrivateUse1, m) in C++",
    ),
    "fake": (
        "fake",
        "no fake function",
        "add one in fake.py (torch.library.register_fake, or a Meta kernel)",
    ),
    "ir": (
        "converter",
        "no GE IR definition known to GE",
        "register an IrDef naming the op as torch_op in ir.py (on an NPU host CANN must "
        "also know its op type: the op's REG_OP)",
    ),
    "converter": (
        "converter",
        "no TorchAir converter",
        "add converter.py (@torchair.register_fx_node_ge_converter) loaded by "
        "load_converters() in __init__.py",
    ),
}


@dataclass(frozen=True)
class Coverage:
    """One op's row. ``converter`` is ``registered``, ``automatic`` (TorchAir
    generates one: IR registered, counts match) or ``""`` with ``why_not`` saying why."""

    op: str
    kernel: bool
    fake: bool
    converter: str
    ir: bool
    specs: bool
    why_not: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def has_kernel(spec: OpSchema) -> bool:
    return any(attach.has_kernel(spec.qualname, k) for k in ("PrivateUse1", *attach.COMPOSITE))


def has_fake(spec: OpSchema) -> bool:
    return attach.has_fake(spec.qualname)


def has_ir(spec: OpSchema) -> bool:
    """The op lowers to registered IR definitions, and GE knows each op type
    (TorchAir's own question; offline opsdk's stand-in answers it from the registry)."""
    _torchair_loaded()
    from torchair.core import _torchair

    irs = irdef.for_op(spec.qualname)
    return bool(irs) and all(
        _torchair.get_registered_ir_def(ir.op_type)[0] == "SUCCESS" for ir in irs
    )


def converter(spec: OpSchema) -> tuple[str, str]:
    """(``registered`` | ``automatic`` | ``""``, why TorchAir would not generate one).

    Asks TorchAir's own registry and automatic-converter rules (private API of the
    pinned torch-npu), so the answer cannot drift from what TorchAir does."""
    _torchair_loaded()
    from torchair._ge_concrete_graph import fx2ge_converter

    op = spec.op()
    if attach.registered_converter(op) is not None:
        return "registered", ""
    try:  # TorchAir's automatic-converter rules, dry run: it only writes the code
        fx2ge_converter._generate_converter_code(op)
    except RuntimeError as err:
        return "", str(err).strip().splitlines()[0]
    return "automatic", ""


def _torchair_loaded() -> None:
    from opsdk.offline.torchair import torchair_with_converters  # loads Dynamo: only when asked

    torchair_with_converters()


_CHECKS = {
    "kernel": has_kernel,
    "fake": has_fake,
    "ir": has_ir,
    "converter": lambda spec: bool(converter(spec)[0]),
}


def of(spec: OpSchema) -> Coverage:
    kind, why_not = converter(spec)
    return Coverage(
        spec.qualname,
        has_kernel(spec),
        has_fake(spec),
        kind,
        has_ir(spec),
        inputs.declared(spec.qualname) is not None,
        why_not,
    )


def require(spec: OpSchema, column: str) -> None:
    """Raise :class:`CellFailure` for the first piece the column needs that ``spec``
    lacks, in the layer that piece belongs to."""
    for piece in columns.column(column).needs:
        if not _CHECKS[piece](spec):
            layer, what, where = _MISSING[piece]
            raise CellFailure(layer, f"{spec.qualname}: {what}, which {column} needs: {where}")


def namespace_ops(namespace: str) -> list[OpSchema]:
    """Every op registered in the torch.library ``namespace``, as the dispatcher knows it."""
    return [
        opspec.of(opspec.resolve(qualname))
        for qualname in sorted(torch._C._dispatch_get_all_op_names())
        if qualname.partition("::")[0] == namespace
    ]


def rows(specs: list[OpSchema], namespace: str | None, where: str) -> list[Coverage]:
    """The rows of ``specs`` (the ops of the package ``where`` names), then with
    ``namespace`` of every other op registered in it (after importing the package)."""
    chosen = {spec.qualname: spec for spec in specs}
    if namespace:
        found = namespace_ops(namespace)
        if not found:
            raise OpsdkError(
                f"no op is registered in namespace {namespace!r} after importing "
                f"{where}: check the name (as in torch.ops.NS.op)"
            )
        chosen.update((spec.qualname, spec) for spec in found)
    return [of(spec) for spec in chosen.values()]


def json_text(rows: list[Coverage]) -> str:
    """The rows as ``opsdk coverage --json`` writes them."""
    return json.dumps([r.to_json() for r in rows], indent=2) + "\n"


def table(rows: list[Coverage]) -> str:
    """The coverage table for a terminal: one row per op, a mark per piece."""
    heads = ("op", "npu kernel", "fake", "converter", "IR", "input specs")
    cells = [
        (
            r.op,
            _mark(r.kernel),
            _mark(r.fake),
            r.converter or "-",
            _mark(r.ir),
            _mark(r.specs),
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)).rstrip()]
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines += [
        f"{r.op}: TorchAir cannot generate a converter: {r.why_not}" for r in rows if r.why_not
    ]
    return "\n".join(lines)


def _mark(present: bool) -> str:
    return "yes" if present else "-"
