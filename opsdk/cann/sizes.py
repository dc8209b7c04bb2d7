"""The sizes of a CANN op's spec tensors: from its formats' ranks, held to its InferShape.

A definition states no shapes. Each tensor's rank is its format's where that fixes one
(``NCHW`` 4, ``NCDHW`` 5), else the rank the op's attrs hint (:func:`rank`). Several
tensors get alike sizes (an elementwise op, a matmul and a broadcast all run), a lone one
distinct sizes (a fake that swaps dims shows). Where the op's own C++ InferShape is at
hand (``accepts``), those first sizes must be a case it accepts; if not, a short fixed
list of other candidates is tried in order (other ranks; one tensor's last dim 2, as a
grid's; one tensor 1-D, as a bias) and the first accepted wins. A tensor the kernel reads
one element of (``CannOp.scalars``) is ``(1,)`` in every candidate. Cheap (an InferShape call
is microseconds, at most :data:`LIMIT` of them) and deterministic; when none is accepted
the first guess stays and :class:`Sizes` says so, for specs.py to tell the user.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from opsdk.cann._model import CannOp

__all__ = ["FORMAT_RANKS", "LIMIT", "Sizes", "candidates", "choose", "fixed_rank", "rank"]

# Formats whose rank is fixed (GE's ge::Format); ND and its kin leave it open.
FORMAT_RANKS = {"NCHW": 4, "NHWC": 4, "HWCN": 4, "CHWN": 4, "NCDHW": 5, "NDHWC": 5, "DHWCN": 5}
# ListInt attrs whose length is the rank of the tensors they describe.
_RANK_LISTS = ("perm", "strides", "dilations", "ksize", "kernel_size")
# Int attrs naming one dimension.
_DIM_ATTRS = ("axis", "dim")
_DEFAULT_RANK = 2
# Ranks tried after the hinted one, most common first.
_OTHER_RANKS = (2, 3, 4, 1, 5)
LIMIT = 64  # InferShape calls at most, per op


@dataclass(frozen=True)
class Sizes:
    """Each tensor input's shape (IR name -> sizes) and what InferShape said of them:
    True accepted, False refused every candidate (the first guess is kept), None not asked."""

    shapes: dict[str, tuple[int, ...]]
    accepted: bool | None
    rank: int  # the rank of the tensors no format fixes


def rank(cann: CannOp) -> int:
    """The tensors' rank as the definition hints it: a fixed-rank format, a rank-long list
    attr's default, a dim attr's default; else 2."""
    hints = [
        FORMAT_RANKS.get(f.removeprefix("FORMAT_"))
        for formats in cann.formats.values()
        for f in formats
    ]
    for attr in cann.ir.attrs:
        if attr.name in _RANK_LISTS and isinstance(attr.default, tuple) and attr.default:
            hints.append(len(attr.default))
        if attr.name in _DIM_ATTRS and isinstance(attr.default, int):  # at least that many
            least = attr.default + 1 if attr.default >= 0 else -attr.default
            hints.append(max(least, _DEFAULT_RANK))
    return max([h for h in hints if h], default=_DEFAULT_RANK)


def choose(
    cann: CannOp,
    tensors: list[str],
    accepts: Callable[[dict[str, tuple[int, ...]], int], bool] | None = None,
) -> Sizes:
    """The shapes of the IR inputs ``tensors``; ``accepts(shapes, rank)`` asks the op's
    InferShape (None: no InferShape)."""
    hinted = rank(cann)
    tried = candidates(cann, tensors)
    first = next(tried)
    if accepts is None:
        return Sizes(first[0], None, hinted)
    for n, (shapes, r) in enumerate([first, *tried]):
        if n >= LIMIT:
            break
        if accepts(shapes, r):
            return Sizes(shapes, True, r)
    return Sizes(first[0], False, hinted)


def fixed_rank(cann: CannOp, name: str) -> int | None:
    """The rank a tensor's formats fix (all alike), None when they leave it open."""
    ranks = {FORMAT_RANKS.get(f.removeprefix("FORMAT_")) for f in cann.formats.get(name, ())}
    return ranks.pop() if len(ranks) == 1 else None


def candidates(cann: CannOp, tensors: list[str]):
    """(shapes, rank) to try, the first guess first; each once (the exploration of an op's
    input space starts from them too: :mod:`opsdk.cann.explore`)."""
    hinted, seen = rank(cann), set()
    for r in dict.fromkeys((hinted, *_OTHER_RANKS)):
        ranks = {t: fixed_rank(cann, t) or r for t in tensors}
        alike = {t: (4,) * ranks[t] for t in tensors}
        if len(tensors) == 1:
            alike = {t: tuple(range(2, 2 + ranks[t])) for t in tensors}
        variants = [alike]
        for t in tensors if len(tensors) > 1 else ():
            variants.append({**alike, t: (*alike[t][:-1], 2)} if alike[t] else alike)
            variants.append({**alike, t: (4,)} if not fixed_rank(cann, t) else alike)
        for shapes in variants:
            shapes = {t: (1,) if t in cann.scalars else s for t, s in shapes.items()}
            key = tuple(shapes.items())
            if key not in seen:
                seen.add(key)
                yield shapes, r
