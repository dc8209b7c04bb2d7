"""Numeric comparison that says where and by how much two results differ.

Tolerances are per dtype (``TOLERANCES``); an op's input specs may override
them (``declare_supported(..., tolerances=...)``). Other dtypes compare exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from opsdk.harness.cell import CellFailure
from opsdk.harness.variants.cases import Call, tensors_of

TOLERANCES = {  # dtype: (rtol, atol)
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def assert_same(
    actual,
    expected,
    *,
    what: str,
    layer: str,
    hint: str,
    tolerances: Mapping[torch.dtype, tuple[float, float]] | None = None,
) -> None:
    """Raise :class:`CellFailure` in ``layer`` unless ``actual`` matches ``expected``
    within ``tolerances`` (dtype: (rtol, atol), over :data:`TOLERANCES`)."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise CellFailure(
                layer, f"{what}: expected {len(expected)} values, got {actual!r}; {hint}"
            )
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, what=f"{what}[{i}]", layer=layer, hint=hint, tolerances=tolerances)
        return
    if not isinstance(expected, torch.Tensor):
        if actual != expected:
            raise CellFailure(layer, f"{what}: expected {expected!r}, got {actual!r}; {hint}")
        return
    if not isinstance(actual, torch.Tensor):
        raise CellFailure(layer, f"{what}: expected a tensor, got {type(actual).__name__}; {hint}")
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise CellFailure(
            layer,
            f"{what}: expected {expected.dtype}{list(expected.shape)}, "
            f"got {actual.dtype}{list(actual.shape)}; {hint}",
        )
    a, e = actual.detach().cpu(), expected.detach().cpu()
    rtol, atol = {**TOLERANCES, **(tolerances or {})}.get(e.dtype, (0.0, 0.0))
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return
    diff = (a.double() - e.double()).abs()
    rel = diff / e.double().abs().clamp_min(1e-12)
    first = tuple(int(i) for i in (~close).nonzero()[0])
    raise CellFailure(
        layer,
        f"{what}: values differ at {int((~close).sum())}/{e.numel()} elements "
        f"(max abs err {float(diff.max()):.3g}, max rel err {float(rel.max()):.3g}, "
        f"first at index {first}: got {a[first].item()!r}, expected {e[first].item()!r}); {hint}",
    )


def assert_same_call(
    index: int,
    actual,
    expected,
    called: Call,
    reference: Call,
    *,
    layer: str,
    hint: str,
    writes_hint: str,
    tolerances: Mapping[torch.dtype, tuple[float, float]] | None,
    after: str = "the call",
) -> None:
    """Call ``index``'s output equals the reference's, then every input of ``called``
    equals the same input of ``reference`` after ``after`` (in-place writes)."""
    assert_same(
        actual,
        expected,
        what=f"call {index}: output",
        layer=layer,
        hint=hint,
        tolerances=tolerances,
    )
    assert_same(
        tensors_of([called.args, called.kwargs]),
        tensors_of([reference.args, reference.kwargs]),
        what=f"call {index}: inputs after {after} (in-place writes)",
        layer=layer,
        hint=writes_hint,
        tolerances=tolerances,
    )
