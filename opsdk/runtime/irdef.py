"""The GE IR definition of an op: what CANN's op prototype (``REG_OP``) declares.

An op package states its IR definition in its ``ir.py``; opsdk keeps a registry
of them so the offline ``_torchair`` stand-in can answer
``get_registered_ir_def`` the way CANN does, and the GE reference executor can
run a custom node through the op's CPU reference kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opsdk.runtime import types

INPUT_KINDS = ("required", "optional", "dynamic")
OUTPUT_KINDS = ("required", "dynamic")
ATTR_TYPES = tuple(types.BY_VALUE_TYPE)


@dataclass(frozen=True)
class Input:
    name: str
    kind: str = "required"

    def __post_init__(self):
        if self.kind not in INPUT_KINDS:
            raise ValueError(f"IR input {self.name!r}: kind must be one of {INPUT_KINDS}")


@dataclass(frozen=True)
class Output:
    name: str
    kind: str = "required"

    def __post_init__(self):
        if self.kind not in OUTPUT_KINDS:
            raise ValueError(f"IR output {self.name!r}: kind must be one of {OUTPUT_KINDS}")


@dataclass(frozen=True)
class Attr:
    """An IR attr; ``default`` (None: the attr is required) is what CANN uses when a
    node leaves the attr unset."""

    name: str
    type: str
    default: object = None

    def __post_init__(self):
        if isinstance(self.default, list):  # keep the definition immutable and hashable
            object.__setattr__(self, "default", tuple(self.default))
        if self.type not in ATTR_TYPES:
            raise ValueError(f"IR attr {self.name!r}: type must be one of {ATTR_TYPES}")


@dataclass(frozen=True)
class IrDef:
    """One GE op prototype. ``torch_op`` ties it to the torch op it lowers
    (``"ns::name"`` or ``"ns::name.overload"``), so the reference executor can
    run the node with that op's CPU kernel."""

    op_type: str
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    attrs: tuple[Attr, ...] = ()
    torch_op: str | None = field(default=None, compare=False)

    def __post_init__(self):
        # Accept lists from hand-written ir.py files; store tuples (hashable, immutable).
        for name in ("inputs", "outputs", "attrs"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def as_torchair_answer(self):
        """The tuple ``_torchair.get_registered_ir_def`` returns for a known op."""
        return (
            "SUCCESS",
            [(i.name, i.kind) for i in self.inputs],
            [(o.name, o.kind) for o in self.outputs],
            [(a.name, a.type) for a in self.attrs],
        )


_REGISTRY: dict[str, IrDef] = {}


def register(ir: IrDef) -> IrDef:
    """Make ``ir`` known to the offline GE stand-in. Re-registering the same
    definition is a no-op; a different one under the same op type is an error,
    because CANN would hold only one."""
    known = _REGISTRY.get(ir.op_type)
    if known is not None and known != ir:
        raise ValueError(
            f"GE op type {ir.op_type!r} is already registered with a different definition; "
            "give each op a unique IR name"
        )
    _REGISTRY[ir.op_type] = ir
    return ir


def lookup(op_type: str) -> IrDef | None:
    return _REGISTRY.get(op_type)


def registered() -> dict[str, IrDef]:
    return dict(_REGISTRY)
