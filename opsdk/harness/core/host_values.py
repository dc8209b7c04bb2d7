"""Host arguments under npugraph_ex: recapture per value, and stale replays.

A captured graph re-reads device buffers on replay, but what the host computed at
capture from an op's host arguments (``SymInt``, ``SymInt[]``, ``Scalar``: its tiling)
is frozen. npugraph_ex (TorchAir's acl graphs) keys its captures on the value of every
symbolic input whose user is not in its update table (``_REPLACE_FUNC_MAP``), so a new
value captures anew: a graph per value, memory growing until ``capture_limit``, then
eager calls. Where a capture is reused instead, the replay computes with the captured
values. The npugraph_ex column records, per shape, the host values each call took and
the captures they caused (:class:`Ledger`), and says which of the two it saw:

- *recapture per value* (:meth:`Ledger.recaptured`): more captures than shapes because
  a host argument changed, or calls of a captured shape run eagerly past
  ``capture_limit``. An argument the specs declare varying (``OneOf``, ``Range``) fails
  the cell; one given a plain value may be a per-call-site constant (a roll's shifts),
  so that is a warning on the passing cell with both fixes;
- *stale replay* (:func:`stale`): a replay whose result is the op's on the captured
  values of the host arguments instead of the new ones. Always a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opsdk._runtime.updatable import not_updatable, registered
from opsdk.harness.cell import CellFailure
from opsdk.harness.core.compare import assert_same_call
from opsdk.harness.core.kernel import call_op
from opsdk.harness.variants.cases import Call, on_device, tensors_of

__all__ = ["Ledger", "RecaptureWarning", "stale", "taken", "updated_params"]

FIXES = (
    "declare it updatable on replay (opsdk new ... --updatable {name}) if it changes per "
    "call, or pass it as a tensor; declare Fixed(...) in specs.py if it is a constant of "
    "the call site"
)
# Where a replay cannot update the argument (:func:`not_updatable`): the fixes left.
FIXES_WITHOUT_UPDATE = (
    "pass it as a tensor if it changes per call, or declare Fixed(...) in specs.py if it is "
    "a constant of the call site (--updatable cannot apply: {why})"
)


class RecaptureWarning(UserWarning):
    """A plain-valued host argument recaptured the graph per value (see the module)."""


def updated_params(op) -> tuple[str, ...]:
    """The host arguments of ``op`` registered updatable on replay (:mod:`opsdk.updatable`)."""
    found = registered().get(op)
    return found.params if found else ()


def host_values(spec, call: Call) -> dict:
    """``call``'s arguments that hold no tensor, by schema name."""
    return {
        name: value
        for name, value in spec.by_name(call.args, call.kwargs).items()
        if not tensors_of(value)
    }


def taken(spec, case, captures: int | None = None) -> str | None:
    """The note of a case whose calls changed host arguments: the values each call took
    (those that changed), and with ``captures`` how many graphs npugraph_ex captured for
    how many shapes; None where no call changed one (:mod:`opsdk.harness.notes`)."""
    names = sorted({n for call in case.calls for n in call.varied})
    if not names:
        return None
    calls = []
    for i, call in enumerate(case.calls):
        values = host_values(spec, call)
        calls.append(f"call {i} " + ", ".join(f"{n}={values[n]!r}" for n in names if n in values))
    note = f"host values taken: {'; '.join(calls)}"
    if captures is not None:
        shapes = len({tuple(t.shape for t in tensors_of([c.args, c.kwargs])) for c in case.calls})
        note += f" ({captures} graph(s) captured for {shapes} shape(s))"
    return f"case {case.label}: {note}" if case.label else note


@dataclass
class _Shape:
    values: list = field(default_factory=list)  # the distinct host values, in call order
    outputs: set = field(default_factory=set)  # the output shapes the calls produced
    captures: int = 0
    eager_after_capture: int = 0  # calls past capture_limit of a shape once captured


@dataclass
class Ledger:
    """Per shape, the host values its calls took and what npugraph_ex did with them."""

    spec: object
    shapes: dict = field(default_factory=dict)
    declared: set = field(default_factory=set)  # arguments the specs declare varying
    updated: tuple = ()  # arguments registered updatable on replay: they never recapture

    def record(self, shape, call: Call, *, captured: bool, eager: bool, outputs=()) -> None:
        """One call of input shapes ``shape``; ``outputs``: the shapes it returned."""
        seen = self.shapes.setdefault(shape, _Shape())
        values = host_values(self.spec, call)
        if values not in seen.values:
            seen.values.append(values)
        seen.outputs.add(tuple(tuple(o) for o in outputs))
        seen.captures += captured
        seen.eager_after_capture += eager and seen.captures > 0
        self.declared.update(call.declared)

    @property
    def captures(self) -> int:
        """The calls that captured a graph (npugraph_ex's empty capture that sets up its
        memory pool is none of them)."""
        return sum(s.captures for s in self.shapes.values())

    def recaptured(self) -> tuple[str, bool] | None:
        """``(message, declared)`` when a host argument recaptured the graph, else None."""
        shapes = [s for s in self.shapes.values() if len(s.values) > 1]
        captures = sum(s.captures for s in shapes)
        eager = sum(s.eager_after_capture for s in shapes)
        if not shapes or (captures <= len(shapes) and not eager):
            return None
        names = [n for n in _changed(shapes) if n not in self.updated]
        taken = "; ".join(
            f"{n}: {', '.join(repr(v[n]) for v in _distinct(shapes, n))}" for n in names
        )
        values = sum(len(s.values) for s in shapes)
        fallback = f", then {eager} call(s) ran eagerly past capture_limit" if eager else ""
        message = (
            f"recaptured per value: {captures} captures for {values} values of host "
            f"argument(s) {', '.join(names)} at {len(shapes)} shape(s){fallback} (values "
            f"taken: {taken}): npugraph_ex keys a capture on the value of a symbolic input "
            f"its update table does not know, so the graph buys nothing; "
            + self._fixes(shapes, names)
        )
        return message, bool(self.declared & set(names))

    def _fixes(self, shapes: list[_Shape], names: list[str]) -> str:
        """The fixes that can apply: an update on replay only where a replay's captured
        outputs still fit (the values keep their shapes) and TorchAir can update the op."""
        why = not_updatable(self.spec)
        if why is None and any(len(s.outputs) > 1 for s in shapes):
            why = f"{', '.join(names)} set(s) an output's shape, which a replay keeps"
        if why is None:
            return FIXES.format(name=",".join(names))
        return FIXES_WITHOUT_UPDATE.format(why=why)

    def check(self, warn) -> None:
        """Fail the cell on a recapture by a declared-varying argument; ``warn`` one by a
        plain-valued argument."""
        found = self.recaptured()
        if found is None:
            return
        message, declared = found
        if declared:
            raise CellFailure("capture", message)
        warn(message)


def _changed(shapes: list[_Shape]) -> list[str]:
    names = {n for s in shapes for v in s.values for n in v}
    return sorted(n for n in names if any(len(_distinct([s], n)) > 1 for s in shapes))


def _distinct(shapes: list[_Shape], name: str) -> list:
    found: list[dict] = []
    for s in shapes:
        for v in s.values:
            if v.get(name) not in [f.get(name) for f in found]:
                found.append(v)
    return found


def _with_host_values(spec, call: Call, values: dict) -> Call:
    """``call`` with the host arguments in ``values`` (by schema name) replaced."""
    positional = [a.name for a in spec.args if not a.kwarg_only]
    args = [values.get(n, v) for n, v in zip(positional, call.args, strict=False)]
    kwargs = {k: values.get(k, v) for k, v in call.kwargs.items()}
    return Call(args, kwargs, call.fixed)


def _suspects(now: dict, then: dict) -> list[dict]:
    """The captured values a stale replay may have used: all of them, or one argument's."""
    changed = {n: then[n] for n in now if n in then and now[n] != then[n]}
    singles = [{n: v} for n, v in changed.items()] if len(changed) > 1 else []
    return [changed, *singles] if changed else []


def stale(
    spec, op, index: int, call: Call, captures: list, actual, buffers: Call, tolerances
) -> CellFailure | None:
    """The stale-replay failure of call ``index`` when its result (``actual``, the
    inputs ``buffers`` after it) is the op's with some host arguments at the values of
    a call that captured this shape (``captures``, latest last), else None."""
    now = host_values(spec, call)
    for captured in reversed(captures):
        then = host_values(spec, captured)
        for suspect in _suspects(now, then):
            old = on_device(_with_host_values(spec, call, suspect), "cpu")
            if _matches(index, actual, call_op(op, old, layer="eager"), buffers, old, tolerances):
                changes = "; ".join(
                    f"{n} captured {v!r}, new {now[n]!r}" for n, v in suspect.items()
                )
                return CellFailure(
                    "stale-input",
                    f"call {index}: stale replay: the result is the op's on the captured value "
                    f"of host argument(s) {', '.join(suspect)} ({changes}): the replay did not "
                    "update them; an update registration must list every host argument the "
                    "kernel reads (opsdk new ... --updatable ARG,...), or pass the value as a "
                    "tensor",
                )
    return None


def _matches(index, actual, expected, buffers, reference, tolerances) -> bool:
    try:
        assert_same_call(
            index, actual, expected, buffers, reference,
            layer="stale-input", hint="", writes_hint="", tolerances=tolerances,
        )  # fmt: skip
    except CellFailure:
        return False
    return True
