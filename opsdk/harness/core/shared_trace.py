"""One trace per case for the compiled columns of a run: trace once, lower to each.

``aot_eager``, ``ge`` and ``npugraph_ex`` each compile every case of an op:
Dynamo traces the call, AOT Autograd traces Dynamo's graph again over fake
tensors, and only then does each backend lower the post-AOT graph its own way.
The two traces are most of a compiled cell's time. When a run has more than one
of these columns, each case is compiled once for all of them: a fan-out Dynamo
backend hands Dynamo's graph to every column's real backend (each runs its own
pre-AOT steps and builds its own compilers), records the AOT Autograd request
each backend makes, traces AOT once for the requests that would trace the same
graph, and lowers a copy of the post-AOT graph with each backend's own
compiler. Each column then runs its case's calls through the one compiled
function, routed to its own lowering, with its own inputs and checks.

Requests trace the same graph when they agree on the AOT settings that shape it
and no decomposition of any of their tables applies to the graph (recorded
while tracing; if one applies, each backend traces on its own). Only inference
graphs are shared: ops with a backward compile per column.

Sharing only saves work, it never decides a result: whatever goes wrong in a
column on a shared compile (an error, a wrong value, a recompile), the column
runs the case again on its own, as without sharing, and that run's result
stands. The compile of a shared case is paid by the column that runs it first.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.exc import RestartAnalysis
from torch._dynamo.testing import CompileCounterWithBackend
from torch._functorch import aot_autograd
from torch._functorch._aot_autograd.utils import make_boxed_func
from torch.utils._mode_utils import no_dispatch

from opsdk.harness import columns
from opsdk.harness.cell import Cell, OpUnderTest
from opsdk.harness.core import run_scope
from opsdk.harness.core.training import trainable
from opsdk.harness.core.usage import Usage

# The AOT settings besides decompositions that shape the traced graph.
_TRACE_SETTINGS = (
    "keep_inference_input_mutations",
    "disable_functionalization",
    "ignore_shape_env",
)

_numbers = itertools.count()
_column: contextvars.ContextVar[str] = contextvars.ContextVar("opsdk_shared_column")


class NotShared(Exception):
    """This column has no lowering on the shared compile: it runs the case alone."""


@contextlib.contextmanager
def running(column: str) -> Iterator[None]:
    """Calls of shared compiles within run ``column``'s lowering."""
    token = _column.set(column)
    try:
        yield
    finally:
        _column.reset(token)


Checks = Callable[[], contextlib.AbstractContextManager]


def _lowering(column: str, spec) -> tuple[Callable, Checks]:
    """The column's Dynamo backend, and the checks it keeps active while compiling."""
    return columns.column(column).lowering(spec)


@dataclass
class _Unavailable:
    """A lowering that failed on the shared compile; calling it sends the column alone."""

    error: BaseException

    def __call__(self, *args):
        raise NotShared(f"{type(self.error).__name__}: {self.error}") from self.error


def _routed(table: dict[str, Callable], *, boxed: bool) -> Callable:
    """A callable that runs the current column's entry of ``table``."""

    def route(*args):
        entry = table.get(_column.get(None))
        if entry is None:
            raise NotShared(f"no lowering for column {_column.get(None)!r}")
        return entry(*args)

    if boxed:
        # AOT Autograd's calling convention, one list of inputs, marked as torch marks it.
        route._boxed_call = True  # type: ignore[attr-defined]  # a function attribute
    return route


@dataclass
class _Request:
    """One backend's call of AOT Autograd, held until all backends have made theirs."""

    column: str
    checks: Checks
    mod: Any
    args: list
    kwargs: dict
    target: Callable | None = None

    def __call__(self, *args):
        return self.target(*args)

    def trace_key(self) -> tuple | None:
        """Requests with equal keys trace the same graph; None: this one traces alone
        (a training graph, or a pass that rewrites the graph before tracing)."""
        grads = any(isinstance(a, torch.Tensor) and a.requires_grad for a in self.args)
        if grads or self.kwargs.get("pre_grad_passes") is not None:
            return None
        return (id(self.mod), *(self.kwargs.get(name, False) for name in _TRACE_SETTINGS))

    def compile_alone(self) -> None:
        with self.checks():
            self.target = aot_autograd.aot_module_simplified(self.mod, self.args, **self.kwargs)


@contextlib.contextmanager
def _held_aot_requests(requests: list[_Request], column: str, checks) -> Iterator[None]:
    """While a backend compiles, its AOT Autograd call is recorded, not run."""
    from opsdk._runtime import patches

    def hold(mod, args, **kwargs):
        request = _Request(column, checks, mod, list(args), kwargs)
        requests.append(request)
        return request

    with patches.aot_calls_replaced(hold):
        yield


def _recording(table: dict, applied: set) -> dict:
    """``table`` with each decomposition noting in ``applied`` that it ran."""

    def recorded(op, fn):
        def decompose(*args, **kwargs):
            applied.add(op)
            return fn(*args, **kwargs)

        return decompose

    return {op: recorded(op, fn) for op, fn in table.items()}


def _trace_once(group: list[_Request]) -> None:
    """One AOT trace for requests with the same trace key; each request's own
    inference compiler lowers a copy of the post-AOT graph."""
    applied: set = set()
    decompositions: dict = {}
    for request in group:
        decompositions.update(request.kwargs.get("decompositions") or {})
    lowered: dict[str, Callable] = {}

    def lower_each(graph, example_inputs):
        with no_dispatch():
            copies = [graph] + [copy.deepcopy(graph) for _ in group[1:]]
        for request, own in zip(group, copies, strict=True):
            kwargs = request.kwargs
            compiler = kwargs.get("inference_compiler") or kwargs["fw_compiler"]
            try:
                with request.checks():
                    compiled = compiler(own, example_inputs)
            except RestartAnalysis:
                raise
            except Exception as err:  # noqa: BLE001 - that column runs alone
                compiled = _Unavailable(err)
            boxed = getattr(compiled, "_boxed_call", False) or isinstance(compiled, _Unavailable)
            lowered[request.column] = compiled if boxed else make_boxed_func(compiled)
        return _routed(lowered, boxed=True)

    first = group[0]
    forward = aot_autograd.aot_module_simplified(
        first.mod,
        first.args,
        fw_compiler=lower_each,
        inference_compiler=lower_each,
        decompositions=_recording(decompositions, applied),
        **{name: first.kwargs[name] for name in _TRACE_SETTINGS if name in first.kwargs},
    )
    for request in group:
        if applied:  # a decomposition shaped the graph: not every backend would trace it
            request.compile_alone()
        else:
            request.target = forward


class _FanOut:
    """The Dynamo backend of a shared case: every column's backend, one AOT trace;
    ``lowering`` gives a column's backend and checks."""

    def __init__(self, lowering: Callable[[str], tuple[Callable, Checks]], columns: tuple):
        self.lowering, self.columns = lowering, columns

    def __call__(self, gm, example_inputs):
        requests: list[_Request] = []
        entries: dict[str, Callable] = {}
        code = gm.code
        for column in self.columns:
            try:
                backend, checks = self.lowering(column)
                with checks(), _held_aot_requests(requests, column, checks):
                    entries[column] = backend(gm, example_inputs)
            except RestartAnalysis:
                raise
            except Exception as err:  # noqa: BLE001 - that column runs alone
                entries[column] = _Unavailable(err)
            if gm.code != code:  # a backend rewrote Dynamo's graph: nothing is shared
                return _Unavailable(RuntimeError(f"the {column} backend rewrote the graph"))
        groups: dict[tuple, list[_Request]] = {}
        for request in requests:
            key = request.trace_key()
            groups.setdefault(key if key is not None else (id(request),), []).append(request)
        for group in groups.values():
            try:
                if len(group) == 1:
                    group[0].compile_alone()
                else:
                    _trace_once(group)
            except RestartAnalysis:
                raise
            except Exception as err:  # noqa: BLE001 - those columns run alone
                for request in group:
                    entries[request.column] = _Unavailable(err)
        return _routed(entries, boxed=False)


def fan_out(backends: dict[str, Callable]) -> Callable:
    """A Dynamo backend that compiles a graph for each of ``backends`` (name -> Dynamo
    backend) with one AOT trace where they trace alike; its compiled function runs the
    lowering of the name :func:`running` sets, and raises :class:`NotShared` where that
    lowering failed (the caller then compiles with that backend alone)."""
    return _FanOut(lambda name: (backends[name], contextlib.nullcontext), tuple(backends))


@dataclass
class Frame:
    """A case's one compiled function, shared by the columns of the run."""

    op: OpUnderTest
    shapes: str
    columns: tuple[str, ...]
    usage: Usage  # the first column's: each column calls it with its own inputs
    counter: CompileCounterWithBackend = field(init=False)
    compiled: Callable = field(init=False)

    def __post_init__(self):
        fan_out = _FanOut(lambda column: _lowering(column, self.op.spec), self.columns)
        self.counter = CompileCounterWithBackend(fan_out)
        name = f"call_op_shared_{next(_numbers)}"
        self.compiled = self.usage.compile(self.counter, self.shapes, name=name)


@dataclass
class _Frames:
    """The shared compiles of the op being checked (one op's at a time)."""

    op: str | None = None
    by_case: dict[tuple, Frame] = field(default_factory=dict)


_frames = _Frames()


def _forget() -> None:
    if _frames.by_case:
        _frames.by_case.clear()
        torch._dynamo.reset()
    _frames.op = None


def passes_shared(cell: Cell, usage: Usage, check: Callable[[Callable, Any], None]) -> bool:
    """Whether ``check(compiled, counter)`` passed on the run's shared compile of ``usage``
    (its compiled function and compile counter), in ``cell``'s column. False when the
    case is not shared or anything went wrong: the column then runs the case alone, and
    that result stands (sharing never decides a result)."""
    shared = _frame(cell, usage)
    if shared is None:
        return False
    try:
        with running(cell.column):
            check(shared.compiled, shared.counter)
    except Exception:  # noqa: BLE001 - whatever it was, the run alone will say
        return False
    return True


def _frame(cell: Cell, usage: Usage) -> Frame | None:
    """The shared compile of ``usage`` for ``cell``'s column, or None: the column then
    compiles the case on its own (outside a run, alone in it, for an op that trains, or
    under an option profile: the shared compile is the columns' default one)."""
    columns = run_scope.compiled_columns()
    shareable = cell.column in columns and not cell.profile and not trainable(cell.op.spec)
    if len(columns) < 2 or not shareable:
        return None
    if _frames.op != cell.op.name:
        _forget()
        _frames.op = cell.op.name
        run_scope.at_end(_forget)
    key = (cell.context, cell.shapes, usage.case.label)
    if key not in _frames.by_case:
        _frames.by_case[key] = Frame(cell.op, cell.shapes, columns, usage)
    return _frames.by_case[key]
