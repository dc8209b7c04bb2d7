"""What one case's two answers mean, and the smallest case that still means it.

Each side either accepts a case (the fake returns outputs; the C++ returns
GRAPH_SUCCESS) or refuses it (the fake raises; the C++ fails or crashes). Both refusing
is fine: the op does not take the case. The C++ refusing what the fake accepts is a
finding (the graph traces, GE fails to compile it); the fake refusing what the C++
accepts is one of its own kind (a case the op takes that no graph can trace); both
accepting but differing in an output's rank, a dim, a dtype, a -1 kept or the output
count is one too (:func:`opsdk.cann.infer.disagreements.disagreements`). A disagreement is
set aside (:func:`plausible`) where the case may be one the op never takes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opsdk.cann.explore.cases import Case, smaller
from opsdk.cann.infer.call import Crashed, Inferred
from opsdk.cann.infer.disagreements import Disagreement, disagreements

__all__ = ["AGREE", "ASIDE", "BOTH_REFUSE", "CPP_REFUSES", "DIFFER", "FAKE_REFUSES", "Unsupported",
           "Verdict", "classify", "plausible", "shrink"]  # fmt: skip

AGREE, BOTH_REFUSE, ASIDE = "agree", "both refuse", "aside"
CPP_REFUSES, FAKE_REFUSES, DIFFER = "C++ refuses", "fake refuses", "differ"
FINDINGS = (CPP_REFUSES, FAKE_REFUSES, DIFFER)
SHRINK_STEPS = 200  # cases tried at most while shrinking one finding


def plausible(verdict: Verdict, case: Case, defaults: tuple, valid=frozenset()) -> Verdict:
    """``verdict``, or :data:`ASIDE` for a disagreement on a case the op may well not
    take: tensors of different shapes (a fake need not check what its op never gets)
    but the shapes of a case known valid (``valid``: :meth:`Case.shapes` of declared
    cases: a norm's ``x`` and its smaller ``gamma``), or a refusal with an attr moved off
    its default (a value the op may not support). A disagreement on tensors alike (any
    row, rank, size, optional input), or at a valid case's shapes in another of the
    definition's rows (a mixed one), is certain."""
    if not verdict.finding:
        return verdict
    shaped = case.alike() or case.shapes() in valid
    if not shaped or (verdict.kind != DIFFER and case.attrs != defaults):
        return Verdict(ASIDE, verdict.detail, verdict.what, verdict.output)
    return verdict


class Unsupported(Exception):
    """A side cannot be asked this case at all (a dtype torch has not): no verdict."""


@dataclass(frozen=True)
class Verdict:
    """A case's outcome: its kind, and for a finding a line saying what each side said
    (``what``: the disagreement's own kind, e.g. ``shape``, ``dtype``, ``failed``)."""

    kind: str
    detail: str = ""
    what: str = ""
    output: int | None = None

    @property
    def finding(self) -> bool:
        return self.kind in FINDINGS

    def same(self, other: Verdict) -> bool:
        """The same disagreement (for shrinking): kind, its own kind and output."""
        return (self.kind, self.what, self.output) == (other.kind, other.what, other.output)


def classify(
    cpp: Inferred | Crashed, fake: list | Exception, *, compile: bool = False, moot=None
) -> Verdict:
    """The verdict on one case: the C++'s answer (or its crash) and the fake's outputs as
    ``(shape, GE dtype)`` pairs (or what it raised). ``compile``: the case's sizes are
    GE's compile-time ones (-1 at each dim the fake's inputs keep symbolic): an output dim
    the fake keeps symbolic must stay -1 (a -1 where the fake's is known is no finding: a
    C++ may be conservative, a fake may fix a size by a guard on it, as
    ``int(math.ceil(n / 64))`` does). ``moot(problem, answer)``: whether a
    caller's convention explains a disagreement (a dtype carried in another)."""
    refused = _refusal(cpp)
    if isinstance(fake, Exception):
        if refused:
            return Verdict(BOTH_REFUSE)
        said = str(fake).strip().splitlines()[0] if str(fake).strip() else type(fake).__name__
        refusal = Disagreement("refused", None, "accepts the case", said, "")
        if moot is not None and moot(refusal, cpp):
            return Verdict(AGREE)
        return Verdict(FAKE_REFUSES, f"the C++ accepts it, the fake raises: {said}", "refused")
    if refused or isinstance(cpp, Crashed):  # a crash is a refusal: _refusal says it
        return Verdict(CPP_REFUSES, f"the fake accepts it, the C++ {refused}", "failed")
    if cpp.shape_status == 0 and cpp.outputs_asked < len(fake):
        fake = fake[: max(cpp.outputs_asked, 1)]  # outputs an attr turns off are not its
    shapes, dtypes = [s for s, _ in fake], [d for _, d in fake]
    found = disagreements(cpp, shapes, dtypes, compile=compile)
    found = [p for p in found if moot is None or not moot(p, cpp)]
    if not found:
        return Verdict(AGREE)
    problem = found[0]
    return Verdict(DIFFER, "; ".join(map(str, found)), problem.kind, problem.output)


def _refusal(cpp: Inferred | Crashed) -> str:
    """How the C++ refused ("" when it accepts)."""
    if isinstance(cpp, Crashed):
        return str(cpp)
    for which, status in (("InferShape", cpp.shape_status), ("InferDataType", cpp.dtype_status)):
        if status not in (None, 0):
            log = next((line[2:] for line in cpp.log if line.startswith("E ")), "no error logged")
            return f"{which} returns GRAPH_FAILED ({log})"
    return ""


def shrink(
    cann, case: Case, verdict: Verdict, judge: Callable[[Case], Verdict | None], pinned=frozenset()
) -> Case:
    """The smallest case found that ``judge`` still gives ``verdict`` for (greedy: the
    first smaller case that does is kept, until none does or :data:`SHRINK_STEPS`)."""
    steps = 0
    while steps < SHRINK_STEPS:
        for candidate in smaller(cann, case, pinned):
            steps += 1
            got = judge(candidate)
            if got is not None and got.same(verdict):
                case = candidate
                break
            if steps >= SHRINK_STEPS:
                return case
        else:
            return case
    return case
