"""How a compiled cell uses the op: the function it compiles, and that function's inputs.

The op alone is the function ``op(*args)`` of the case's inputs. A usage context
(:mod:`opsdk.harness.variants.contexts`) is another function around the op and other graph
inputs built from the same calls (bases the op's tensors are views of, a module
holding its written inputs). The compiled columns run a :class:`Usage` as they run
the op: eager of :meth:`Usage.eager` (the npu kernel, checked against the CPU
reference) against :meth:`Usage.compile`, outputs and every graph input after the
call, so the checks are the same in every context.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
from collections.abc import Callable

import torch

from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.core import layout
from opsdk.harness.core.compile_call import compile_call
from opsdk.harness.core.kernel import call_op
from opsdk.harness.failures import first_line, root_cause
from opsdk.harness.variants import contexts
from opsdk.harness.variants.cases import Call, Case, map_tensors, on_device, tensors_of

__all__ = ["Usage", "usages"]

_SIDES = 3  # a view is the middle slice of a base of 3: a neighbour on either side


@dataclasses.dataclass
class Usage:
    """The op as one case of a cell uses it.

    ``body`` is what runs in the graph, a function of the graph inputs; ``bind``, run
    before it outside the graph, may take some inputs away from it (a module's buffer
    holds them); both run under ``mode`` (e.g. ``torch.inference_mode``)."""

    case: Case
    body: Callable
    bind: Callable[[Call], Call] = lambda call: call
    mode: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
    # What a failure of the compiled call on the graph inputs means, where the usage
    # knows better than the generic classification (:mod:`.failures`); None: it does not.
    explain: Callable[[BaseException, Call], CellFailure | None] = lambda err, call: None

    def eager(self, *args, **kwargs):
        with self.mode():
            call = self.bind(Call(list(args), kwargs))
            return self.body(*call.args, **call.kwargs)

    def compile(self, backend, shapes: str, *, name: str | None = None) -> Callable:
        """The body under torch.compile (see :func:`compile_call`), called as :meth:`eager`."""
        compiled = compile_call(self.body, backend, shapes, name=name)

        def call(*args, **kwargs):
            with self.mode():
                bound = self.bind(Call(list(args), kwargs))
                try:
                    return compiled(*bound.args, **bound.kwargs)
                except Exception as err:
                    explained = self.explain(err, Call(list(args), kwargs))
                    if explained is None:
                        raise
                    raise explained from err

        return call


def usages(cell: Cell, cases: list[Case]) -> list[Usage]:
    """The cell's usages of the op, one per case (``buffer``: two, one per grad mode);
    raises :class:`CellSkipped` when the context fits neither the op nor any case."""
    op = cell.op.overload()
    if cell.context is None:
        return [Usage(case, op) for case in cases]
    refusal = contexts.get(cell.context).refusal(cell.op.spec, cell.shapes)
    if refusal:
        raise CellSkipped(f"context {cell.context} does not apply: {refusal}")
    build = _BUILDERS[cell.context]
    built, reasons = [], []
    for case in cases:
        made = build(cell.op.spec, op, case)
        if isinstance(made, str):
            reasons.append(made)
        else:
            built += made
    if not built:
        raise CellSkipped(f"context {cell.context} does not apply: {'; '.join(reasons)}")
    return built


def _relabel(case: Case, calls: list[Call], what: str = "") -> Case:
    label = " ".join(p for p in (case.label, what) if p)
    return dataclasses.replace(case, label=label, calls=calls)


def _with_tensors(call: Call, tensors: list, fixed: list) -> Call:
    """``call`` with its tensors (in :func:`tensors_of` order) replaced by ``tensors``."""
    replacing = iter(tensors)
    args, kwargs = map_tensors([call.args, call.kwargs], lambda _: next(replacing))
    return dataclasses.replace(call, args=args, kwargs=kwargs, fixed=tuple(fixed))


def _called(op, call: Call, device: str):
    """``op`` on copies of ``call`` on ``device`` (``cpu``: the CPU reference): its outputs
    and its arguments after it."""
    after = on_device(call, device)
    with torch.no_grad():
        return call_op(op, after, layer="eager"), after


# ----- view: each tensor argument a view of a larger graph input -----


def _memory_order(t: torch.Tensor) -> tuple[int, ...]:
    """``t``'s dims from outermost to innermost in memory (the cases' tensors are dense)."""
    strides = t.stride()
    return tuple(sorted(range(t.dim()), key=lambda d: (-strides[d], d)))


def _base_of(t: torch.Tensor, fixed: tuple[int, ...], index: int) -> tuple[torch.Tensor, tuple]:
    """A base holding ``t`` as its middle slice (``base[1]``, in ``t``'s memory order) with
    other values around it, and which of its dims stay."""
    order = _memory_order(t)
    gen = torch.Generator().manual_seed(4321 + index)
    sizes = (_SIDES, *(t.shape[d] for d in order))
    base = (torch.rand(sizes, generator=gen) * 8 - 4).to(t.dtype)
    base.select(0, 1).copy_(t.permute(order))
    return base, (0, *(1 + order.index(d) for d in fixed))


def _view(spec, op, case: Case):
    """``select`` on a leading dim of 3, then the case's own layout (a transpose for the
    non-contiguous case) back; the base's other slices catch a write past the view."""
    orders = [_memory_order(t) for t in tensors_of([case.calls[0].args, case.calls[0].kwargs])]
    inverse = [tuple(o.index(d) for d in range(len(o))) for o in orders]

    def views(args, kwargs):
        position = itertools.count()

        def view(base):
            undo = inverse[next(position)]
            inner = base.select(0, 1)
            return inner.permute(undo) if undo != tuple(range(len(undo))) else inner

        return map_tensors([args, kwargs], view)

    def body(*args, **kwargs):
        args, kwargs = views(list(args), kwargs)
        return op(*args, **kwargs)

    calls = []
    for call in case.calls:
        tensors = tensors_of([call.args, call.kwargs])
        made = [_base_of(t, f, i) for i, (t, f) in enumerate(zip(tensors, call.fixed, strict=True))]
        calls.append(_with_tensors(call, [b for b, _ in made], [f for _, f in made]))
    return [Usage(_relabel(case, calls), body)]


# ----- chain: aten ops produce the inputs and consume the outputs -----


def _produced(t: torch.Tensor) -> torch.Tensor:
    """``t`` computed inside the graph (same values, dtype and strides): an add, not a
    ``clone``, which npugraph_ex rewrites into a strided read of the graph input itself."""
    return t + torch.zeros_like(t)


def _chain(spec, op, case: Case):
    """An add makes each tensor input inside the graph; ``view(-1)`` takes each output
    and written input, as a model's next op does: ``reshape`` where the npu kernel's
    result is not contiguous, as a model would, and on the CPU reference, whose layout
    is its own (the fake describes the npu kernel's)."""
    out, after = _called(op, case.calls[0], "npu")
    written = [a.name for a in spec.mutated_args]
    results = tensors_of(out) + _written(spec, after, written)
    flat = [t.is_contiguous() for t in results]

    def body(*args, **kwargs):
        args, kwargs = map_tensors([list(args), kwargs], _produced)
        produced = op(*args, **kwargs)
        results = tensors_of(produced) + _written(spec, Call(args, kwargs), written)
        return [
            t.view(-1) if contiguous and t.device.type != "cpu" else t.reshape(-1)
            for t, contiguous in zip(results, flat, strict=True)
        ]

    return [Usage(case, body, explain=functools.partial(_fake_strides, op))]


def _fake_strides(op, err: BaseException, call: Call) -> CellFailure | None:
    """A chain that fails where the fake function's strides differ from the npu kernel's
    (contiguous) ones: the next op read the fake's, as a model's does. A kernel that
    rebinds a written input breaks the chain the same way, but the fault is the kernel's
    (:func:`.layout.rebound`)."""
    rebound = layout.rebinding(op, call, "npu")
    if rebound is not None:
        return CellFailure(
            rebound.layer,
            f"{rebound} (it broke the next op in the graph: {first_line(root_cause(err))})",
        )
    mismatch = layout.stride_mismatch(op, call, "npu")
    if mismatch is None or mismatch.layer != "fake":
        return None
    return CellFailure(
        "fake",
        f"the op's output, as the fake function describes it, broke the next op in the "
        f"graph ({first_line(root_cause(err))}): {mismatch}",
    )


def _written(spec, call: Call, names: list[str]) -> list[torch.Tensor]:
    """The tensors of ``call`` bound to the written arguments ``names``."""
    bound = spec.by_name(call.args, call.kwargs)
    return tensors_of([bound[n] for n in names if n in bound])


# ----- twice: the second call reads what the first wrote -----


def _twice(spec, op, case: Case):
    """An op that writes an input runs twice on the same tensors; one that does not takes
    its first output in place of the first argument of that shape and dtype."""
    if spec.inplace:

        def twice(*args, **kwargs):
            return _fresh(spec, op(*args, **kwargs)), op(*args, **kwargs)

        return [Usage(case, twice)]
    out, _ = _called(op, case.calls[0], "cpu")
    first = tensors_of(out)[0] if tensors_of(out) else None
    tensors = tensors_of([case.calls[0].args, case.calls[0].kwargs])
    fits = [
        i
        for i, t in enumerate(tensors)
        if first is not None and t.shape == first.shape and t.dtype == first.dtype
    ]
    if not fits:
        return f"case {case.label or 'default'}: no tensor argument takes the first output"

    def body(*args, **kwargs):
        once = op(*args, **kwargs)
        position = itertools.count()
        fed = tensors_of(once)[0]
        args, kwargs = map_tensors(
            [list(args), kwargs], lambda t: fed if next(position) == fits[0] else t
        )
        return once, op(*args, **kwargs)

    return [Usage(case, body)]


def _fresh(spec, result) -> tuple:
    """The first call's new outputs, without the written inputs it hands back (torch_npu's
    ``Tensor(a!) self -> Tensor(a!)``): under torch.compile such a returned alias comes
    back as a copy taken after that call (torch's functionalization returns a graph
    output per alias), while eager returns the input itself, which the second call
    overwrites; the written input is compared after both calls anyway."""
    per_return = (result,) if len(spec.returns) == 1 else tuple(result or ())
    return tuple(v for v, r in zip(per_return, spec.returns, strict=True) if not r.aliased)


# ----- buffer: the written inputs are a module's buffers -----


class _Holder(torch.nn.Module):
    """A module whose buffers are the op's written inputs, as a KV cache is a model's."""

    def __init__(self, op, spec, written: list[str]):
        super().__init__()
        self.op, self.spec, self.written = op, spec, written
        self.positions: list[str] = []  # the names of the arguments passed by position
        for name in written:
            self.register_buffer(name, None)

    def bind(self, call: Call) -> Call:
        """Hand the written inputs of ``call`` to the module; the rest stay arguments."""
        self.positions = [a.name for a in self.spec.args if not a.kwarg_only][: len(call.args)]
        for name, value in (*zip(self.positions, call.args, strict=True), *call.kwargs.items()):
            if name in self.written:
                setattr(self, name, value)
        return Call(
            [v for n, v in zip(self.positions, call.args, strict=True) if n not in self.written],
            {n: v for n, v in call.kwargs.items() if n not in self.written},
        )

    def forward(self, *args, **kwargs):
        rest = iter(args)
        full = [getattr(self, n) if n in self.written else next(rest) for n in self.positions]
        held = {n: getattr(self, n) for n in self.written if n not in self.positions}
        return self.op(*full, **kwargs, **held)


_MODES = {
    "under torch.no_grad()": torch.no_grad,
    "under torch.inference_mode()": torch.inference_mode,
}


def _buffer(spec, op, case: Case):
    written = [a.name for a in spec.mutated_args]
    result = []
    for what, mode in _MODES.items():
        holder = _Holder(op, spec, written)
        result.append(Usage(_relabel(case, case.calls, what), holder, holder.bind, mode))
    return result


_BUILDERS = {"view": _view, "chain": _chain, "twice": _twice, "buffer": _buffer}
