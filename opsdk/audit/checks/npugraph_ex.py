"""Check ``npugraph_ex``: the op enters npugraph_ex with its fake function as its only
graph-mode piece (the npugraph_ex guide's "Meta only" path: no converter, no IR).

Each case runs as the npugraph_ex column runs it, with the stand-in kernel in place of
the op's (:mod:`opsdk.audit.meta_kernel`): compiled by the real npugraph_ex backend
(``fullgraph=True``), called in the same buffers, so the first call of a shape
captures a graph and the next replay it, and from the third call on the host
arguments take other values. Findings, each certain:

- the fake function reads a tensor's value on the host (``.item()``, ``.tolist()``,
  ``bool(t)``): nothing can trace it, and a captured graph cannot sync with the host;
- npugraph_ex cannot compile a call the fake function takes eagerly (``aot`` when
  ``aot_eager`` fails too: the fake check then says why);
- a write the schema declares (``Tensor(a!)``) is lost: the stand-in writes a mark into
  every written input, which the buffer must hold after the capture and each replay;
- a shape is not captured once and replayed (npugraph_ex fell back to eager), or a host
  argument the specs declare varying recaptured the graph per value.

A plain host argument that recaptured per value, and the host arguments the schema says
change per call (:mod:`~opsdk.audit.checks.host_args`), are notes.
"""

from __future__ import annotations

import torch
import torch._dynamo
from torch._subclasses.fake_tensor import DataDependentOutputException

from opsdk._runtime import spec
from opsdk.audit import meta_kernel
from opsdk.audit.checks import Undecided, fake, fake_outputs, host_args, where
from opsdk.harness.cell import CellFailure
from opsdk.harness.columns import npugraph_ex
from opsdk.harness.core import npugraph_backend
from opsdk.harness.failures import chain, first_line, root_cause
from opsdk.harness.variants.cases import Call, cases, mark_static, on_device

__all__ = ["check"]


def check(library, op, shapes: str) -> list[str]:
    fake.check_has_fake(op)
    if not op.cases:
        raise Undecided(op.no_case)
    notes, ran = host_args.notes(op.op), 0
    op_spec = spec.of(op.op)
    steps = npugraph_ex.STEPS[shapes]
    for case in cases(op_spec, shapes, "npugraph_ex", steps=steps, vary_from=npugraph_ex.VARY_FROM):
        calls = [on_device(c, "npu") for c in case.calls]
        refused = _refused(op, calls)
        if refused:
            notes.append(f"case {case.label}: {refused}")
            continue
        with case.named():
            notes += _replayed(op, op_spec, calls, shapes)
        ran += 1
    if not ran:
        raise Undecided("; ".join(notes) or f"no case varies in {shapes} mode")
    return notes


def _refused(op, calls: list[Call]) -> str:
    """Why the fake function refuses a call eagerly ("" if it takes them all); a host
    read of a tensor's value is no refusal but a finding."""
    for i, call in enumerate(calls):
        try:
            fake_outputs(op.op, call)
        except DataDependentOutputException as err:
            raise CellFailure(
                "capture",
                f"call {i}: the fake function{where(op.meta)} reads a tensor's value on the "
                f"host ({first_line(err)}: .item(), .tolist(), bool(t)): torch.compile cannot "
                "trace it and a captured graph cannot sync with the host; compute the "
                "outputs' sizes from shapes and host arguments only (a size that depends on "
                "data: torch.library.get_ctx().new_dynamic_size())",
            ) from err
        except Exception as err:  # noqa: BLE001 - any refusal: the case proves nothing
            return f"the fake function refuses call {i}'s sizes: {first_line(err)}"
    return ""


def _replayed(op, op_spec, calls: list[Call], shapes: str) -> list[str]:
    """Run ``calls`` through npugraph_ex in one set of buffers per shape, as a serving
    loop does; the notes (a recapture by a plain host argument)."""
    backend, _ = npugraph_ex.lowering(op_spec)
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda *a, **k: op.op(*a, **k), backend=backend, dynamic=shapes != "static", fullgraph=True
    )
    ledger = npugraph_ex.Ledger(op_spec, updated=npugraph_ex.updated_params(op.op))
    buffers, shape = None, None
    with npugraph_ex.counting_graphs() as counts, npugraph_backend.rebuilt_outputs_unwarned():
        for i, call in enumerate(calls):
            if buffers is None or npugraph_ex.shapes_of(call) != shape:
                buffers, shape = call, npugraph_ex.shapes_of(call)
                mark_static(buffers, shapes)
            else:
                buffers = npugraph_ex.refilled(buffers, call)
            written = _cleared(op.op, buffers)
            captures, replays = counts.captures, counts.replays
            try:
                compiled(*buffers.args, **buffers.kwargs)
            except Exception as err:  # noqa: BLE001 - classified below
                npugraph_backend.raise_if_setup(err)
                raise _not_compiled(op, call, i, shapes, err) from err
            capturing = counts.captures > captures
            eager = not capturing and counts.replays == replays
            ledger.record(shape, call, captured=capturing, eager=eager)
            _check_written(op, written, i, "capture" if capturing else "replay")
    recaptured = ledger.recaptured()
    if recaptured and recaptured[1]:
        raise CellFailure("capture", recaptured[0])
    shapes_seen = len(ledger.shapes)
    if counts.captures < shapes_seen or counts.replays < npugraph_ex.REPLAYS:
        raise CellFailure(
            "capture",
            f"expected a capture per shape ({shapes_seen}) and at least {npugraph_ex.REPLAYS} "
            f"replays, saw {counts.captures} captures and {counts.replays} replays: "
            "npugraph_ex fell back to eager"
            + (f"; {recaptured[0]}" if recaptured else "; run with TORCH_LOGS=+npugraph_ex"),
        )
    return [recaptured[0]] if recaptured else []


def _cleared(op, call: Call) -> dict[str, torch.Tensor]:
    """The inputs the schema marks written, by name, zeroed: the stand-in marks them."""
    bound = spec.of(op).by_name(call.args, call.kwargs)
    written = {
        a.name: bound[a.name]
        for a in op._schema.arguments
        if a.alias_info is not None
        and a.alias_info.is_write
        and isinstance(bound.get(a.name), torch.Tensor)
    }
    for tensor in written.values():
        tensor.zero_()
    return written


def _check_written(op, written: dict[str, torch.Tensor], index: int, how: str) -> None:
    for name, tensor in written.items():
        if not bool((tensor == meta_kernel.WRITTEN).all()):
            raise CellFailure(
                "replay",
                f"call {index} ({how}): {op.qualname} writes {name} (Tensor(a!) in its "
                "schema), but after the compiled call the buffer does not hold the write: "
                "npugraph_ex's functionalized graph lost it; a schema returning the written "
                "input (-> Tensor(a!)) is what the npugraph_ex guide says not to do: "
                "return () or new tensors",
            )


def _not_compiled(op, call: Call, index: int, shapes: str, err: Exception) -> CellFailure:
    """A call the fake function took eagerly that npugraph_ex fails: in ``aot`` when
    aot_eager fails too (the fake check's finding), else npugraph_ex's own."""
    cause = root_cause(err)
    if isinstance(cause, torch._dynamo.exc.Unsupported):
        raise Undecided(f"call {index}: Dynamo cannot trace the call: {first_line(err)}")
    if any(isinstance(e, DataDependentOutputException) for e in chain(err)):
        return CellFailure(
            "capture",
            f"call {index}: the op reads a tensor's value on the host while compiled "
            f"({first_line(cause)}): a captured graph cannot sync with the host",
        )
    torch._dynamo.reset()
    try:
        torch.compile(lambda *a, **k: op.op(*a, **k), backend="aot_eager", fullgraph=True)(
            *call.args, **call.kwargs
        )
    except Exception:  # noqa: BLE001 - aot_eager fails as well
        layer, more = "aot", "aot_eager fails too: the fake check says why"
    else:
        layer, more = "capture", "aot_eager compiles it: npugraph_ex's own passes refuse it"
    return CellFailure(
        layer,
        f"call {index}: npugraph_ex cannot compile {op.qualname} in {shapes} shapes, whose "
        f"fake function{where(op.meta)} takes the call eagerly: {first_line(cause)}; {more}",
    )
