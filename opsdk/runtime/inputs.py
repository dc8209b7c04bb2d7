"""Input specs: the inputs an op supports, declared in its package (``specs.py``).

Named after TorchAir's converter test declarations
(``declare_supported([Support(F32(2, 2), F16(2, 2))])``) so they read the same,
but keyed by the op rather than its converter: the harness derives every
column's cases from them (see :mod:`opsdk.harness.inputs`). For an op
``my_axpy(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor``::

    declare_supported(
        torch.ops.myops.my_axpy.default,
        [
            Support(F32(2, 3), F32(2, 3)),
            Support(F16(2, 3), F16(2, 3, value_range=(-1, 1))),
            Support(F32(4, 3), F32(3)),  # broadcasting
            Support(F32(), F32()),  # 0-dim
            Support(F32(0, 3), F32(0, 3)),  # empty
            Support(F32(2, 3), F32(2, 3), alpha=-2.5),  # a scalar value
        ],
        tolerances={torch.float16: (1e-2, 1e-2)},  # (rtol, atol) over the defaults
    )

A Support's positional and keyword values are the op's arguments: a
:class:`TensorSpec` (``F32(*dims)`` ...) or a list of them for a tensor, a plain
Python value for anything else. Without a declaration an op runs on float32
tensors of shape (2, 3) and sample scalars derived from its schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import torch

from opsdk.errors import SpecError
from opsdk.runtime import spec

__all__ = [
    "BF16",
    "BOOL",
    "F16",
    "F32",
    "I8",
    "I32",
    "I64",
    "Declaration",
    "Support",
    "TensorSpec",
    "declare_supported",
    "declared",
]


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument: its sizes, dtype and (optionally) the range its values are
    drawn from, ``[low, high)`` (default: normal for floats, -10..10 for ints).
    ``static_dims`` lists the dims whose size the op fixes (e.g. a head size of 128):
    dynamic mode keeps them while it grows the others."""

    dims: tuple[int, ...]
    dtype: torch.dtype
    value_range: tuple[float, float] | None = None
    static_dims: tuple[int, ...] = ()

    def __post_init__(self):
        if any(not isinstance(d, int) or d < 0 for d in self.dims):
            raise SpecError(f"tensor sizes must be non-negative ints, got {self.dims}")
        if self.value_range is not None and (
            len(self.value_range) != 2 or self.value_range[0] >= self.value_range[1]
        ):
            raise SpecError(f"value_range must be (low, high) with low < high: {self.value_range}")
        if any(not 0 <= d < len(self.dims) for d in self.static_dims):
            raise SpecError(f"static_dims {self.static_dims} must index the sizes {self.dims}")

    @property
    def is_empty(self) -> bool:
        return 0 in self.dims

    def sizes(self, step: int) -> tuple[int, ...]:
        """The sizes at dynamic ``step`` (0: as declared); see opsdk.harness.inputs."""
        return tuple(
            d + step * (d + 1) if d >= 2 and i not in self.static_dims else d
            for i, d in enumerate(self.dims)
        )

    @property
    def varies(self) -> bool:
        """Has a size that changes between calls (Dynamo specializes sizes 0 and 1)."""
        return self.sizes(1) != self.dims

    def __repr__(self) -> str:
        name = _NAMES.get(self.dtype, str(self.dtype))
        dims = ", ".join(map(str, self.dims))
        extra = f", value_range={self.value_range}" if self.value_range else ""
        extra += f", static_dims={self.static_dims}" if self.static_dims else ""
        return f"{name}({dims}{extra})"


def _typed(dtype: torch.dtype, name: str):
    def make(
        *dims: int,
        value_range: tuple[float, float] | None = None,
        static_dims: tuple[int, ...] = (),
    ) -> TensorSpec:
        return TensorSpec(tuple(dims), dtype, value_range, tuple(static_dims))

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"A {dtype} tensor of sizes ``dims`` (``{name}()`` is 0-dim)."
    return make


_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.int8: "I8",
    torch.int32: "I32",
    torch.int64: "I64",
    torch.bool: "BOOL",
}
F32 = _typed(torch.float32, "F32")
F16 = _typed(torch.float16, "F16")
BF16 = _typed(torch.bfloat16, "BF16")
I8 = _typed(torch.int8, "I8")
I32 = _typed(torch.int32, "I32")
I64 = _typed(torch.int64, "I64")
BOOL = _typed(torch.bool, "BOOL")


class Support:
    """One supported call: the op's arguments, tensors given as :class:`TensorSpec`."""

    def __init__(self, *args, **kwargs):
        self.args = args
        self.kwargs = kwargs

    def tensor_specs(self) -> list[TensorSpec]:
        found: list[TensorSpec] = []
        for value in [*self.args, *self.kwargs.values()]:
            values = value if isinstance(value, list) else [value]
            found += [v for v in values if isinstance(v, TensorSpec)]
        return found

    @property
    def has_empty(self) -> bool:
        return any(t.is_empty for t in self.tensor_specs())

    @property
    def varies(self) -> bool:
        return any(t.varies for t in self.tensor_specs())

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"Support({', '.join(parts)})"


@dataclass(frozen=True)
class Declaration:
    """What an op package declared for one op."""

    cases: tuple[Support, ...]
    tolerances: Mapping[torch.dtype, tuple[float, float]] = field(default_factory=dict)
    non_contiguous: bool = True  # also run the first case on non-contiguous tensors


_REGISTRY: dict[str, Declaration] = {}


def declare_supported(
    op,
    cases: Iterable[Support],
    *,
    tolerances: Mapping[torch.dtype, tuple[float, float]] | None = None,
    non_contiguous: bool = True,
) -> Declaration:
    """Register the inputs ``op`` (a ``torch.ops`` overload) supports; checked against
    its schema now, so a mistake fails the package's import with the argument named."""
    if not isinstance(op, torch._ops.OpOverload):
        raise SpecError(
            f"declare_supported takes an op overload (torch.ops.ns.op.default), got {op!r}"
        )
    cases = tuple(cases)
    op_spec = spec.of(op)
    name = op_spec.qualname
    if not cases or not all(isinstance(c, Support) for c in cases):
        raise SpecError(f"declare_supported({name}): give a non-empty list of Support(...)")
    for case in cases:
        _check_against_schema(name, op_spec, case)
    for dtype, tol in (tolerances or {}).items():
        if not isinstance(dtype, torch.dtype) or len(tol) != 2:
            raise SpecError(
                f"declare_supported({name}): tolerances map a torch.dtype to (rtol, atol), "
                f"got {dtype!r}: {tol!r}"
            )
    declaration = Declaration(cases, dict(tolerances or {}), non_contiguous)
    _REGISTRY[name] = declaration
    return declaration


def _check_against_schema(name: str, op: spec.OpSpec, case: Support) -> None:
    positional = [a for a in op.args if not a.kwarg_only]
    by_name = {a.name: a for a in op.args}
    if len(case.args) > len(positional):
        raise SpecError(
            f"{case!r} of {name}: {len(case.args)} positional values, the schema has "
            f"{len(positional)}"
        )
    given = dict(zip([a.name for a in positional], case.args, strict=False))
    for key, value in case.kwargs.items():
        if key not in by_name:
            raise SpecError(f"{case!r} of {name}: the schema has no argument {key!r}")
        given[key] = value
    for arg in op.args:
        if arg.name not in given:
            # ``Tensor?[]`` too: a missing list of optional tensors is taken as None.
            if not arg.has_default and "?" not in arg.type:
                raise SpecError(f"{case!r} of {name}: give a value for {arg.name!r}")
            continue
        value = given[arg.name]
        values = value if isinstance(value, list) else [value]
        if arg.is_tensor and not all(isinstance(v, TensorSpec) or v is None for v in values):
            raise SpecError(
                f"{case!r} of {name}: {arg.name!r} is a tensor: give F32(...), F16(...), ..."
            )
        if not arg.is_tensor and any(isinstance(v, TensorSpec) for v in values):
            raise SpecError(f"{case!r} of {name}: {arg.name!r} is not a tensor: give a value")


def declared(qualname: str) -> Declaration | None:
    """The declaration registered for ``qualname`` (``ns::name[.overload]``), if any."""
    return _REGISTRY.get(qualname)
