"""Explore an op's input space: its fake function held to its C++ InferShape /
InferDataType on hundreds of cases of its CANN definition, not only the declared ones.

Shared by ``opsdk check`` (the ``infer`` layer of an op with C++ inference) and
``opsdk audit --ir`` (its ``infer`` check). :mod:`.cases` makes the cases (no fake
needed), :mod:`.judge` classifies each and shrinks a finding, :mod:`.torch_side` asks
the fake and writes a case as a ``Support(...)`` line. :func:`explore` runs a budget of
cases (``--explore N``, :data:`BUDGET` by default, deterministic for a seed), a few of
them asked again in GE's dynamic form (-1 at the dims the fake keeps symbolic);
:func:`hold` runs it for a compiled library and reports each finding as one line with
both file:lines, the chip and the smallest case, cached on the sources.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from opsdk._runtime import locator, types
from opsdk.cann._model import CannOp
from opsdk.cann.explore.cases import Case, Tensor, defaults, generate
from opsdk.cann.explore.judge import (
    AGREE,
    CPP_REFUSES,
    DIFFER,
    FAKE_REFUSES,
    Unsupported,
    Verdict,
    classify,
    plausible,
    shrink,
)
from opsdk.cann.infer.call import Crashed, Given, Inferred
from opsdk.errors import SpecError

__all__ = ["BUDGET", "ENV", "Explored", "Finding", "budget", "case_of", "explore", "hold"]

BUDGET = 300  # cases per op (each: one fake call and one C++ call, ~1 ms together)
ENV = "OPSDK_EXPLORE"  # what --explore N sets (0: no exploration)
ANCHORS = 6  # accepted cases explored around, besides the caller's
SYMBOLIC = 4  # cases both sides took asked again with symbolic sizes (out of the budget)
_FIX = {
    CPP_REFUSES: "the graph traces but GE fails to compile it: make the fake refuse it (and "
    "specs.py leave it out), or the C++ take it",
    FAKE_REFUSES: "the op takes it but no graph can trace it: make the fake take it, or the "
    "C++ refuse it",
    DIFFER: "GE and the kernel size the outputs by the C++: fix the side named likelier wrong",
}
_DYNAMIC = " in the dynamic form (-1 at each dim the fake keeps symbolic, as GE compiles it)"


def budget(environ=os.environ) -> int:
    """Cases per op: ``OPSDK_EXPLORE`` (``--explore N``), else :data:`BUDGET`."""
    given = environ.get(ENV, "").strip()
    if not given:
        return BUDGET
    if not given.isdigit():
        raise SpecError(f"{ENV}={given!r}: give a number of cases per op, e.g. 300 (0: none)")
    return int(given)


@dataclass(frozen=True)
class Finding:
    """One disagreement: the verdict, the smallest case that still shows it, the case it
    was met at, and whether it shows in the case's dynamic form (see :func:`explore`)."""

    verdict: Verdict
    case: Case
    met: Case
    dynamic: bool = False


@dataclass
class Explored:
    """What an exploration ran: cases asked, per verdict kind how many, the findings."""

    cases: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def explore(
    cann: CannOp,
    cpp: Callable[[Case], Inferred],
    fake: Callable[[Case], list],
    *,
    cases: int = BUDGET,
    seed: int = 0,
    anchors: Iterable[Case] = (),
    pinned: frozenset = frozenset(),
    moot=None,
    traced: Callable[[Case], tuple[list, Case]] | None = None,
) -> Explored:
    """Ask ``cpp`` (an ``Inferred``, raising ``Crashed``) and ``fake`` (``(shape, GE
    dtype)`` per output, raising its refusal) on ``cases`` cases of ``cann``'s input
    space (``pinned``: see :mod:`.cases`; ``moot``: see :func:`.judge.classify`;
    ``anchors``: cases of the op's, e.g. its declared ones: those both sides take are
    explored around first and their shapes vouch for a case, :func:`.judge.plausible`);
    each disagreement of its own kind, output and verdict is shrunk once. A C++ refusal counts
    only at attrs some case both sides took has: else the attrs are what it refuses (a
    derived case's invented values), not the sizes. With ``traced`` (the fake on
    symbolic sizes and the case with -1 at the dims it kept symbolic), up to
    :data:`SYMBOLIC` of the budget's cases are cases both sides took (one per rank),
    asked again in that dynamic form as GE compiles a dynamic graph."""
    unmoved = defaults(cann)
    valid: frozenset[tuple] = frozenset()  # the anchors' shapes once judged, read by judge

    def answered(case: Case, said, compile: bool = False) -> Verdict | None:
        inferred: Inferred | Crashed
        try:
            inferred = cpp(case)
        except Crashed as crash:
            inferred = crash
        except Unsupported:
            return None
        return classify(inferred, said, compile=compile, moot=moot)

    def judge(case: Case) -> Verdict | None:
        said: list | Exception
        try:
            said = fake(case)
        except Unsupported:
            return None
        except Exception as err:  # noqa: BLE001 - any refusal is the fake's answer
            said = err
        verdict = answered(case, said)
        return verdict and plausible(verdict, case, unmoved, valid)

    def judge_dynamic(case: Case) -> Verdict | None:
        """``case`` in its dynamic form; a fake that cannot trace it symbolically (a
        data-dependent guard) is torch's business: no verdict."""
        if traced is None:
            return None
        try:
            said, dynamic = traced(case)
        except Exception:  # noqa: BLE001 - any refusal, Unsupported included
            return None
        if dynamic == case:  # every size fixed: the static case again
            return None
        verdict = answered(dynamic, said, compile=True)
        return verdict and plausible(verdict, case, unmoved, valid)

    done = Explored()
    # the caller's anchors both sides take are valid cases: explored around, their shapes
    # vouch for other rows and attrs at them
    given = list(anchors)[: cases // 2]
    valid = frozenset()
    accepted = [a for a in given if getattr(judge(a), "kind", None) == AGREE]
    done.cases = len(given)
    valid = frozenset(a.shapes() for a in accepted)
    limit = len(accepted) + ANCHORS
    first: dict[tuple, tuple[Case, Verdict, bool]] = {}
    agreed: set[tuple] = set()  # the attrs of the cases both sides took
    symbolic: dict[tuple, Case] = {}  # per rank the first case both took, to ask dynamic
    kinds: collections.Counter = collections.Counter()
    static = cases - (min(SYMBOLIC, cases) if traced else 0)
    for case in generate(cann, seed, accepted, pinned):
        if done.cases >= static:
            break
        done.cases += 1
        verdict = judge(case)
        if verdict is None:
            continue
        kinds[verdict.kind] += 1
        if verdict.kind == "agree":
            agreed.add(case.attrs)
            if len(accepted) < limit:
                accepted.append(case)
            if case.alike() and any(n > 1 for i in case.inputs for t in i for n in t.shape):
                symbolic.setdefault(tuple(len(t.shape) for i in case.inputs for t in i), case)
        if verdict.finding:
            key = (verdict.kind, verdict.what, verdict.output, False)
            first.setdefault(key, (case, verdict, False))
    for case in list(symbolic.values())[: min(SYMBOLIC, cases - done.cases)]:
        done.cases += 1
        verdict = judge_dynamic(case)
        if verdict is None:
            continue
        kinds[f"{verdict.kind} (dynamic)"] += 1
        if verdict.finding:
            key = (verdict.kind, verdict.what, verdict.output, True)
            first.setdefault(key, (case, verdict, True))
    done.kinds = dict(sorted(kinds.items()))
    for case, verdict, dynamic in first.values():
        if verdict.kind == CPP_REFUSES and case.attrs not in agreed:
            continue  # the C++ takes no case with these attrs: it refuses them, not sizes
        judged = judge_dynamic if dynamic else judge
        small = shrink(cann, case, verdict, judged, pinned)
        done.findings.append(Finding(judged(small) or verdict, small, case, dynamic))
    return done


def hold(
    cann: CannOp,
    library,
    inference,
    torch_op,
    *,
    chip: str,
    fake_at: str,
    cases: int,
    seed: int = 0,
    pinned: frozenset = frozenset(),
    moot=None,
    anchors: tuple[Case, ...] = (),
) -> dict:
    """Explore ``torch_op`` (a :class:`~.torch_side.TorchOp`) against ``library`` (a
    compiled ``infer.Library`` of ``inference``) as ``chip``: ``{"cases", "kinds",
    "findings", "stricter", "seconds"}``, each finding one line naming both file:lines
    (``fake_at``: the fake's), the chip and the smallest case as a Support line. A fake
    refusing what the C++ accepts is ``stricter``, a note, not a finding: the fake may
    hold a limit of the kernel's that the C++ leaves to tiling (a last dim divisible by
    8), or miss a case the op takes; the shrunk case says which. ``anchors``: see
    :func:`explore`. Cached on the library (keyed on its sources), the fake's file, the
    definition, the budget, the anchors and this package's own sources."""
    ir = cann.ir
    parts = [_OWN, repr(cann), str(library.path), _file_digest(fake_at), chip, cases, seed]
    parts += [sorted(pinned), [str(p) for p in inference.sources], str(library.root)]  # lines
    parts += [torch_op.spec.qualname, repr(anchors)]

    def run() -> dict:
        start = time.perf_counter()

        def cpp(case: Case):
            given = [[_given(t) for t in instances] for instances in case.inputs]
            return library.infer(ir.op_type, given, list(case.attrs), len(ir.outputs), chip=chip)

        done = explore(
            cann,
            cpp,
            torch_op.fake,
            cases=cases,
            seed=seed,
            pinned=pinned,
            moot=moot,
            traced=torch_op.traced,
            anchors=anchors,
        )
        lines = [(f, _line(f, inference, torch_op, chip, fake_at)) for f in done.findings]
        stricter = [line for f, line in lines if f.verdict.kind == FAKE_REFUSES]
        return {
            "cases": done.cases,
            "kinds": done.kinds,
            "findings": [line for f, line in lines if f.verdict.kind != FAKE_REFUSES],
            "stricter": stricter,
            "seconds": round(time.perf_counter() - start, 3),
        }

    return _remembered(parts, run)


def _line(finding: Finding, inference, torch_op, chip: str, fake_at: str) -> str:
    verdict = finding.verdict
    function = inference.infer_dtype if verdict.what == "dtype" else inference.infer_shape
    small, met = torch_op.support(finding.case), torch_op.support(finding.met)
    shown = small if small == met else f"{small} (met first as {met})"
    form = _DYNAMIC if finding.dynamic else ""
    return (
        f"explored: {verdict.kind} on {shown}{form}: {verdict.detail} [C++ {function}] "
        f"[fake{f' ({fake_at})' if fake_at else ''}] as {chip}; {_FIX[verdict.kind]}"
    )


def case_of(given, attrs) -> Case:
    """A node's inputs as GE hands them over (per IR input its ``Given`` instances) and
    its attrs (IR order; a list as a tuple), as a case: a declared one, to explore around."""
    return Case(
        tuple(tuple(_tensor(g) for g in instances) for instances in given),
        tuple(tuple(a) if isinstance(a, list) else a for a in attrs),
    )


def _tensor(given: Given) -> Tensor:
    name = types.BY_GE_VALUE[given.dtype].ge
    if given.data is None:
        return Tensor(name, tuple(given.shape))
    code = "i" if name == "DT_INT32" else "q"
    count = len(given.data) // struct.calcsize(code)
    return Tensor(name, tuple(given.shape), struct.unpack(f"<{count}{code}", given.data))


def _given(tensor) -> Given:
    dtype = types.DTYPES[tensor.dtype].value
    if tensor.data is None:
        return Given(dtype, tensor.shape)
    code = "i" if tensor.dtype == "DT_INT32" else "q"
    return Given(dtype, tensor.shape, struct.pack(f"<{len(tensor.data)}{code}", *tensor.data))


def _own_digest() -> str:
    """This package's sources: what it finds changes with them (part of every cache key)."""
    here = Path(__file__).parent
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(here.glob("*.py")))).hexdigest()


_OWN = _own_digest()


def _file_digest(at: str) -> str:
    """The digest of the file ``at`` (``path:line``) names, "" when there is none."""
    path = Path(at.rpartition(":")[0] or at) if at else None
    if path is None or not path.is_file():
        return ""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _remembered(parts: list, run: Callable[[], dict]) -> dict:
    """``run()``'s result, from the cache when ``parts`` were explored before."""
    key = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]
    path = locator.cache_root() / "explore" / f"{key}.json"
    if path.is_file():
        try:
            return {**json.loads(path.read_text()), "cached": True}
        except (OSError, ValueError):
            pass  # a torn entry: explore again
    result = run()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(result))
        partial.replace(path)
    except OSError:
        pass  # an unwritable cache costs time, never the result
    return {**result, "cached": False}
