"""Judge what a graph traced for a node (the fake function's outputs) by what the op's C++
inference says of the same node.

GE runs InferShape twice on a real host: when it compiles the graph (a symbolic dim is
-1) and when it runs it (real sizes); the kernel's outputs are sized by it. So every
output's rank and static dims must agree, a dim the trace keeps symbolic must stay -1 at
compile time, every dim must be known at run time, and dtypes and the output count must
agree. Each disagreement says which side is likelier wrong.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from opsdk._runtime import types
from opsdk.cann.infer.call import Inferred

__all__ = ["Disagreement", "declared", "disagreements"]

UNKNOWN_DIM, UNKNOWN_RANK = -1, (-2,)
_HUGE = 1 << 31  # past any real size: an unknown dim (-1) read as unsigned, then cast back
_FAKE_WRONG = "likelier wrong: the fake (GE and the kernel size the output by the C++)"
_CPP_WRONG = "likelier wrong: the C++"
_REFUSED = (
    "likelier wrong: the C++ if the case is valid, else the fake and specs.py, which must "
    "refuse it too"
)


@dataclass(frozen=True)
class Disagreement:
    """One finding: what (``shape``, ``unknown-dim``, ``dtype``, ``count``, ``failed``),
    which output (None: the node), each side's answer and which is likelier wrong."""

    kind: str
    output: int | None
    cpp: str
    fake: str
    verdict: str
    other: str = "fake"  # whose answer ``fake`` is: the fake's trace, or the reference's run

    def __str__(self) -> str:
        where = "" if self.output is None else f"output {self.output}: "
        return f"{where}C++ {self.cpp}, {self.other} {self.fake} ({self.verdict})"


def disagreements(
    inferred: Inferred,
    shapes: list[tuple[int, ...] | None],
    dtypes: list[str | None],
    *,
    compile: bool,
    other: str = "fake",
) -> list[Disagreement]:
    """How ``inferred`` disagrees with the traced outputs ``shapes`` (-1: a symbolic dim;
    None: not known) and ``dtypes`` (GE enumerators; None: not known), which ``other``
    gave. ``compile``: GE's compile-time inference (-1 allowed where the trace is
    symbolic), else run time (every size known)."""
    n = len(shapes)
    # A function asking for an output the node lacks fails for that reason: count first.
    if inferred.outputs_asked > n or (inferred.shape_status == 0 and inferred.outputs_asked < n):
        cpp = f"infers {inferred.outputs_asked} outputs"
        return [Disagreement("count", None, cpp, f"returns {n}", _FAKE_WRONG, other)]
    if inferred.shape_status not in (None, 0) or inferred.dtype_status not in (None, 0):
        which = "InferShape" if inferred.shape_status not in (None, 0) else "InferDataType"
        log = next((line for line in inferred.log if line.startswith("E ")), "E no error logged")
        cpp = f"{which} GRAPH_FAILED ({log[2:]})"
        return [Disagreement("failed", None, cpp, "accepts the case", _REFUSED, other)]
    found = []
    for i, (inferred_shape, fake) in enumerate(zip(inferred.shapes, shapes, strict=False)):
        problem = (
            None if fake is None else _shape_problem(tuple(inferred_shape), tuple(fake), compile)
        )
        if problem:
            found.append(
                Disagreement(problem[0], i, _dims(inferred_shape), _dims(fake), problem[1], other)
            )
    for i, (number, fake_dtype) in enumerate(zip(inferred.dtypes, dtypes, strict=False)):
        name = row.ge if (row := types.BY_GE_VALUE.get(number)) else str(number)
        if fake_dtype is not None and name not in (fake_dtype, "DT_UNDEFINED"):
            found.append(Disagreement("dtype", i, name, fake_dtype, _FAKE_WRONG, other))
    return found


def _shape_problem(cpp: tuple, fake: tuple, compile: bool) -> tuple[str, str] | None:
    if cpp == UNKNOWN_RANK:
        return (
            None if compile else ("shape", "the C++ leaves the rank unknown with every size known")
        )
    if any(d < UNKNOWN_DIM or d >= _HUGE for d in cpp):
        return "unknown-dim", f"{_CPP_WRONG}: a dim no size can be (unsigned arithmetic on -1?)"
    if len(cpp) != len(fake):
        return "shape", _FAKE_WRONG
    for c, f in zip(cpp, fake, strict=True):
        if f == UNKNOWN_DIM and c != UNKNOWN_DIM:
            return "unknown-dim", f"{_CPP_WRONG}: a dim the graph keeps symbolic must stay -1"
        if c == UNKNOWN_DIM and f != UNKNOWN_DIM and not compile:
            return "shape", f"{_CPP_WRONG}: a dim left unknown with every size known"
        if UNKNOWN_DIM not in (c, f) and c != f:
            return "shape", _FAKE_WRONG
    return None


def _dims(shape) -> str:
    shape = list(shape)
    return "unknown rank" if shape == [-2] else str(shape)


def declared(
    allowed: Mapping[str, Collection[str]], outputs: list[tuple[str, str | None]]
) -> list[Disagreement]:
    """How the traced output dtypes disagree with what a definition declares: ``allowed``
    maps an output's IR name to the GE enumerators it may take for the node's inputs
    (``IrDef.output_dtypes``); ``outputs``: (IR name, traced GE enumerator) per output.
    Holds where the op has no InferDataType: GE then takes the dtype from the definition.
    An output with nothing allowed (inputs no row declares) is the specs' business."""
    found = []
    for i, (name, traced) in enumerate(outputs):
        kept = sorted(allowed.get(name, ()))
        if traced is not None and kept and traced not in kept:
            cpp = f"definition declares {' or '.join(kept)}"
            verdict = f"{_FAKE_WRONG[:-1]}: its output {name} is declared so)"
            found.append(Disagreement("declared-dtype", i, cpp, traced, verdict))
    return found
