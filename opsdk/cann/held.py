"""The cases ``--from-cann`` writes, held to the op's own C++ InferShape before they are.

A case is sizes for the tensor inputs (:func:`opsdk.cann.sizes.candidates`: the first
guess, other ranks, a last dim of 2, a 1-D or 0-D tensor) and values for the value inputs
and required attrs (:func:`values`: the first guess, then values the C++ may need: dims
within the rank, a permutation, lists of other lengths). :meth:`Search.find` asks
InferShape the cases accepted before, those with one tensor changed, then each
combination in order, and keeps the first it accepts (at most :data:`LIMIT` calls over
an op's searches, none after :data:`CRASHES` crashes in a row; deterministic). Then
dynamic mode: the harness grows each size of 2 or more between calls
(``TensorSpec.sizes``) and GE infers the graph with -1 at each growing dim; a dim the
C++ refuses either way stays fixed in the case (``static_dims``: sizes alike grow
together, so they are freed together, else one position at a time), and a host value
it refuses stepped stays ``Fixed``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from opsdk._runtime.inputs import TensorSpec, names_dims
from opsdk.cann import sizes
from opsdk.cann._model import CannOp

__all__ = ["CRASHES", "LIMIT", "Choice", "Search", "stepped", "values"]

LIMIT = 2048  # InferShape calls at most an op's searches make (each under a millisecond)
CRASHES = 16  # crashes in a row that end an op's searches (each restarts the worker: ~10 ms)


@dataclass(frozen=True)
class Choice:
    """One case's sizes and values (IR names) and what dynamic mode must keep of them."""

    shapes: dict[str, tuple[int, ...]]
    rank: int
    values: dict[str, object]
    static: dict[str, tuple[int, ...]] = field(default_factory=dict)  # dims kept per input
    kept: frozenset[str] = frozenset()  # host values kept (Fixed) between calls


def values(name: str, first, rank: int) -> list:
    """The values a host int or int list named ``name`` is tried at, ``first`` (the guess)
    first: an int 1, 0, 2, -1 too; a list naming dims (``axes``, ``perm``) as dims within
    ``rank`` (reversed: a perm; in order; the last; the first), another one as 1s and 2s
    of other lengths (1, 2, the rank, a pair per dim)."""
    if isinstance(first, bool) or not isinstance(first, (int, list)):
        return [first]
    tried: list
    if isinstance(first, int):
        tried = [first, 1, 0, 2, -1]
    elif first and not all(isinstance(v, int) and not isinstance(v, bool) for v in first):
        return [first]
    elif names_dims(name) or name == "perm":
        dims = list(range(rank))
        tried = [first, dims[::-1], dims, dims[-1:], dims[:1]]
    else:
        tried = [first, *([v] * n for n in dict.fromkeys((1, 2, rank, 2 * rank)) for v in (1, 2))]
    return [v for i, v in enumerate(tried) if v != [] and v not in tried[:i]]


def stepped(name: str, value):
    """``value`` as the harness's dynamic calls change a host value the specs leave free:
    an int one up (``OneOf(v, v + 1)``), an int list one up in each element; None where
    it stays (a value naming dims, written ``Fixed``)."""
    if isinstance(value, bool) or names_dims(name):
        return None
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list) and value:
        return [v + 1 for v in value]
    return None


@dataclass
class Search:
    """Cases of ``cann`` held to ``accepts(shapes, values, dtypes)`` (see
    :func:`opsdk.scaffold.cann_infer.acceptor`; None: nothing to ask)."""

    cann: CannOp
    tensors: list[str]  # the IR tensor inputs that take sizes
    accepts: Callable | None
    found: list[Choice] = field(default_factory=list)  # accepted, tried first next time
    asked: int = 0  # calls the searches made (not counting dynamic mode's: :func:`_pinned`)
    crashes: int = 0  # calls in a row the C++ crashed on (``accepts`` answered None)

    def find(
        self,
        given: list[str],
        choices: Callable[[int], dict[str, list]],
        dtypes: dict[str, str],
        attrs: dict,
        spelled: dict[str, str] | None = None,
    ) -> Choice | None:
        """The first case InferShape accepts with the tensor inputs ``given`` (the others
        absent), ``choices(rank)`` (IR name -> the values to try, the guess first),
        ``dtypes`` and the ``attrs`` moved off their defaults, pinned for dynamic mode;
        the first guess when there is nothing to ask, None when none is accepted.
        ``spelled``: the torch name of each value input a compiled graph takes (the
        harness steps it between dynamic calls: :func:`stepped`)."""
        candidates = self._candidates(given, choices)
        accepts = self.accepts
        if accepts is None:
            return next(candidates)

        def asks(choice: Choice, shapes=None, host=None) -> bool:
            shapes = {n: s for n, s in (shapes or choice.shapes).items() if n in given}
            return accepts(shapes, {**attrs, **(host or choice.values)}, dtypes)

        for choice in candidates:
            if self.asked >= LIMIT:
                break
            self.asked += 1
            answer = asks(choice)
            if answer:
                self.found.append(choice)
                return _pinned(choice, asks, spelled or {})
            self.crashes = self.crashes + 1 if answer is None else 0
            if self.crashes >= CRASHES:  # whatever it is asked: no case will tell
                self.asked = LIMIT
        return None

    def _candidates(self, given: list[str], choices) -> Iterator[Choice]:
        """What was accepted before (where its values are among ``choices``), then every
        size candidate with every combination of values (the guesses first), each once."""
        seen = set()
        for choice in itertools.chain(self.found, self._near(), self._combinations(choices)):
            options = choices(choice.rank)
            if options.keys() != choice.values.keys() or any(
                v not in options[k] for k, v in choice.values.items()
            ):
                continue
            key = repr(([(n, s) for n, s in choice.shapes.items() if n in given], choice.values))
            if key not in seen:
                seen.add(key)
                yield choice

    def _near(self) -> Iterator[Choice]:
        """The accepted cases with one tensor's sizes changed to another it takes in
        :meth:`_sizes` at that rank (a newly given optional input finds its own)."""
        pool = list(self._sizes())
        for choice in self.found:
            for name in self.tensors:
                for made, rank in pool:
                    if rank == choice.rank and made[name] != choice.shapes[name]:
                        yield Choice({**choice.shapes, name: made[name]}, rank, choice.values)

    def _combinations(self, choices) -> Iterator[Choice]:
        """Every size candidate with the guessed values, then with one value changed,
        then with every combination: a case one change away is met early."""
        pool = list(self._sizes())
        for level in (_one_change, _every):
            for made, rank in pool:
                options = choices(rank)
                for values in level(options):
                    yield Choice(made, rank, values)

    def _sizes(self) -> Iterator[tuple[dict, int]]:
        """:func:`opsdk.cann.sizes.candidates`, then each of several tensors 0-D (a scale
        InferShape wants one element of) beside the first guess's others."""
        candidates = list(sizes.candidates(self.cann, self.tensors))
        yield from candidates
        first, rank = candidates[0]
        for name in self.tensors if len(self.tensors) > 1 else ():
            if not sizes.fixed_rank(self.cann, name):
                yield {**first, name: ()}, rank


def _pinned(choice: Choice, asks, spelled: dict[str, str]) -> Choice:
    """``choice`` with the dims and host values the C++ refuses to see change kept: every
    growing dim is kept at first (the static case, accepted), then each size's dims are
    freed together where the C++ takes them growing (else one position from the right at
    a time); a host value whose stepped one it refuses is kept."""
    shapes = choice.shapes.items()
    growing = {(n, d) for n, s in shapes for d, size in enumerate(s) if size >= 2}
    kept = set(growing)

    def takes(free: set) -> bool:
        """Whether the C++ takes the dims ``free`` grown (a run) and -1 (the compile)."""
        static = {n: tuple(d for d in range(len(s)) if (n, d) not in free) for n, s in shapes}
        run = {n: _grown(s, static[n]) for n, s in shapes}
        compiled = {n: _unknown(s, run[n]) for n, s in shapes}
        return asks(choice, shapes=run) and asks(choice, shapes=compiled)

    for size in sorted({choice.shapes[n][d] for n, d in growing}):
        alike = {(n, d) for n, d in growing if choice.shapes[n][d] == size}
        if takes(growing - (kept - alike)):
            kept -= alike
            continue
        for back in sorted({len(choice.shapes[n]) - d for n, d in alike}):
            at = {(n, d) for n, d in alike if len(choice.shapes[n]) - d == back}
            if takes(growing - (kept - at)):
                kept -= at
    static = {n: tuple(sorted(d for m, d in kept if m == n)) for n in choice.shapes}
    held = frozenset(
        name
        for name, value in choice.values.items()
        if name in spelled
        and (other := stepped(spelled[name], value)) is not None
        and not asks(choice, host={**choice.values, name: other})
    )
    return Choice(choice.shapes, choice.rank, choice.values, static, held)


def _grown(shape: tuple[int, ...], static: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` on the harness's first dynamic call, ``static`` dims kept."""
    return TensorSpec(shape, torch.float32, static_dims=static).sizes(1)


def _unknown(shape: tuple[int, ...], grown: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` as GE compiles a dynamic graph: -1 at each dim that grows."""
    return tuple(-1 if g != d else d for d, g in zip(shape, grown, strict=True))


def _one_change(options: dict[str, list]) -> Iterator[dict]:
    """The guesses (each list's first), then each value with one other."""
    guess = {name: tried[0] for name, tried in options.items()}
    yield guess
    for name, tried in options.items():
        for other in tried[1:]:
            yield {**guess, name: other}


def _every(options: dict[str, list]) -> Iterator[dict]:
    for combination in itertools.product(*options.values()):
        yield dict(zip(options, combination, strict=True))
