"""The tensor inputs an AscendC kernel reads one element of: a scalar passed as a tensor.

A definition cannot say it: ops-math's Pows declares ``x2`` as ``x1`` (``REG_OP``: both
``T``; OpDef: the same dtypes; no InferShape), and its kernel binds ``x2`` to a
``GlobalTensor`` it only ever reads as ``x2Gm.GetValue(0)`` (its tiling's own test gives
``x2`` the shape ``{1}``). Such an input gets sizes ``(1,)`` in the cases ``--from-cann``
writes, not the other inputs' (:func:`opsdk.cann.sizes.candidates`). Read from the text of
the op's ``op_kernel`` sources: a ``GlobalTensor`` bound to the input
(``v.SetGlobalBuffer((__gm__ T*)x2)``) whose every other use is ``v.GetValue(0)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["one_element"]

_BOUND = re.compile(r"\b(\w+)\s*\.\s*SetGlobalBuffer\s*\(\s*\(\s*__gm__[^)]*\)\s*(\w+)\b")
_DECLARED = re.compile(r"GlobalTensor\s*<[^>]*>[^;(]*;")  # `GlobalTensor<T> x1Gm, x2Gm;`
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def one_element(kernels: Path, inputs: Iterable[str]) -> frozenset[str]:
    """Those of ``inputs`` (IR names) that the kernel sources in ``kernels`` (the op's
    ``op_kernel`` folder) read one element of, and nothing else."""
    files = sorted([*kernels.rglob("*.cpp"), *kernels.rglob("*.h")]) if kernels.is_dir() else []
    text = "\n".join(_COMMENT.sub(" ", f.read_text(errors="replace")) for f in files)
    text = _DECLARED.sub(";", text)
    bound: dict[str, set[str]] = {}
    for variable, name in _BOUND.findall(text):
        bound.setdefault(name, set()).add(variable)
    return frozenset(n for n in inputs if bound.get(n) and all(_scalar(v, text) for v in bound[n]))


def _scalar(variable: str, text: str) -> bool:
    """Whether ``variable`` is read as its element 0 only (and at least once)."""
    uses = [text[m.end() :].lstrip()[:32] for m in re.finditer(rf"\b{variable}\b", text)]
    reads = [u for u in uses if re.match(r"\.\s*GetValue\s*\(\s*0\s*\)", u)]
    bindings = [u for u in uses if re.match(r"\.\s*SetGlobalBuffer\b", u)]
    return bool(reads) and len(reads) + len(bindings) == len(uses)
