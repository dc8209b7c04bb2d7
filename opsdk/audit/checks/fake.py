"""Check ``fake``: the Meta function traces in each shape mode without specializing.

Each case runs through ``torch.compile(backend="aot_eager", fullgraph=True)`` (the
stand-in kernel answers the calls), with the sizes the harness grows between calls in
``dynamic`` mode (:mod:`opsdk.harness.variants.cases`). Sizes the Meta function refuses
eagerly prove nothing (a note); a failure under symbolic sizes the Meta accepts eagerly,
or a recompile, is a finding; so is a tensor the Meta function makes on a real device
(fake tensors follow their inputs' device: it must too). An op with no fake function at
all (nothing FakeTensorMode can run for it) is a finding before any case.
"""

from __future__ import annotations

import re

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounterWithBackend

from opsdk._runtime import spec
from opsdk.audit.checks import Undecided, fake_outputs, fakeable, where
from opsdk.harness.cell import CellFailure
from opsdk.harness.failures import first_line, root_cause
from opsdk.harness.variants.cases import cases, mark_static, on_device, tensors_of

__all__ = ["check", "check_has_fake"]

# FakeTensorMode's words for a Meta function's tensor made on a real device
_OFF_DEVICE = re.compile(r"tensor's device must be `meta`, got (\w+)")


def check(library, op, shapes: str) -> list[str]:
    check_has_fake(op)
    if not op.cases:
        raise Undecided(op.no_case)
    notes, ran = [], 0
    for case in cases(spec.of(op.op), shapes, "aot_eager"):
        calls = [on_device(c, "npu") for c in case.calls]
        refused = _refused(op, calls)
        if refused:
            notes.append(f"case {case.label}: {refused}")
            continue
        _check_compiled(op, calls, shapes, case.label)
        ran += 1
    if not ran:
        raise Undecided("; ".join(notes) or f"no case varies in {shapes} mode")
    return notes


def check_has_fake(op) -> None:
    """torch.compile traces an op under FakeTensorMode: an op with nothing it can run
    (:func:`~opsdk.audit.checks.fakeable`) cannot be traced at all. A repository's op the
    ``registry`` check found without one is that check's finding, not said again here."""
    if op.untraceable:
        raise Undecided(op.untraceable)
    if fakeable(op.op):
        return
    raise CellFailure(
        "fake",
        f"{op.qualname} has no fake (Meta) function: torch.compile cannot trace it; "
        "register one with torch.library.register_fake",
    )


def _refused(op, calls) -> str:
    """Why the Meta function refuses a call's sizes eagerly ("" if it takes them all).
    A tensor it makes off the meta device is no refusal but a finding: under fake
    tensors its outputs must follow its inputs' device."""
    for i, call in enumerate(calls):
        try:
            fake_outputs(op.op, call)
        except Exception as err:  # noqa: BLE001 - any refusal
            off = _OFF_DEVICE.search(str(err))
            if off:
                raise CellFailure(
                    "fake",
                    f"call {i}: the Meta function{where(op.meta)} makes a tensor on "
                    f"{off.group(1)}, not on its inputs' device: make it with "
                    "device=x.device (or x.new_empty)",
                ) from err
            return f"the Meta function refuses call {i}'s sizes: {first_line(err)}"
    return ""


def _check_compiled(op, calls, shapes: str, label: str) -> None:
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(
        lambda *a, **k: op.op(*a, **k),
        backend=counter,
        dynamic=shapes != "static",
        fullgraph=True,
    )
    # Compiles up to the call after which no recompile is expected: in dynamic mode the
    # second (its grown sizes may leave the first's 0/1 specializations, Dynamo's own),
    # else the first.
    settled, expected = 1 if shapes == "dynamic" else 0, None
    for i, call in enumerate(calls):
        mark_static(call, shapes)
        sizes = [tuple(t.shape) for t in tensors_of([call.args, call.kwargs])]
        try:
            compiled(*call.args, **call.kwargs)
        except Exception as err:  # noqa: BLE001 - the Meta took these sizes eagerly
            if isinstance(root_cause(err), torch._dynamo.exc.Unsupported):
                # Dynamo's limit (a sparse result...), not the Meta function's
                raise Undecided(
                    f"case {label}: Dynamo cannot trace the call: {first_line(err)}"
                ) from err
            raise CellFailure(
                "fake",
                f"case {label}, call {i} (sizes {sizes}): the Meta function{where(op.meta)} "
                f"takes these sizes eagerly but fails under {shapes} shapes: "
                f"{first_line(root_cause(err))}; keep sizes symbolic (no int(), no Python "
                "branch on a size)",
            ) from err
        if i == settled:
            expected = counter.frame_count
        elif expected is not None and counter.frame_count > expected:
            raise CellFailure(
                "recompile",
                f"case {label}, call {i} (sizes {sizes}): the op recompiled under {shapes} "
                f"shapes: a guard in the Meta function{where(op.meta)} fixed a size; rerun "
                "with TORCH_LOGS=recompiles to see it",
            )
