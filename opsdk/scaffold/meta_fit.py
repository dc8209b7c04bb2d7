"""The :mod:`opsdk.meta` helper a new op's fake function likely needs, read off its schema.

A schema says which arguments are tensors, dims or indices, never what the op computes:
the helper is a guess, which the fake skeleton shows as a comment above its
``ImplementMe`` (the package passes nothing until its author wrote the fake), or, for an
in-place op, above the ``return`` its schema makes certain. The one certain fit, a
functional partner's output shaped as the input its in-place op writes, the template
writes as code (``meta.same_as``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from opsdk._runtime import spec

# The generated package's line length, less a fake function's indent and "# ".
_WIDTH = 100 - len("    # ")
_DIMS = ("dim", "dims", "axis", "axes")


@dataclass(frozen=True)
class Fit:
    """When the helper fits (``when``, a question to the op's author) and the code calling it."""

    when: str
    code: str

    def comment(self) -> list[str] | None:
        """The comment's lines (without ``# ``), None if the code is too long for one."""
        if len(self.code) + 4 > _WIDTH:
            return None
        said = f"{self.when} Then, with `from opsdk import meta`:"
        return [*textwrap.wrap(said, _WIDTH, break_long_words=False), f"    {self.code}"]


def suggest(op: spec.OpSchema) -> list[str] | None:
    """The comment suggesting the fitting helper in ``op``'s fake, None when nothing fits
    (an op returning anything but tensors) or the call is too long for a line."""
    if not op.returns or spec.returns_its_first_argument(op):  # in place: it returns None
        fit = _inplace(op)  # or the input it writes, which is certain: only the check is
    elif any(r.type != "Tensor" for r in op.returns):
        return None
    else:
        fit = _family(op)
        if fit is not None:
            fit = Fit(fit.when, "return " + ", ".join([fit.code] * len(op.returns)))
    return fit.comment() if fit is not None else None


def _inplace(op: spec.OpSchema) -> Fit | None:
    """``meta.inplace``: checks that the op's other tensors broadcast to the one it writes."""
    written = op.mutated_args[0].name if op.mutated_args else None
    others = [a.name for a in _tensors(op) if a.name != written]
    if written is None or not others:
        return None
    when = f"Must {', '.join(others)} broadcast to {written}, as the kernel demands?"
    return Fit(when, f"meta.inplace({', '.join([written, *others])})")


def _family(op: spec.OpSchema) -> Fit | None:
    """The op family the schema's arguments suggest, by the helpers of :mod:`opsdk.meta`."""
    tensors = [a.name for a in _tensors(op)]
    lists = [a.name for a in op.args if a.type == "Tensor[]"]
    dim = next((a.name for a in op.args if a.name in _DIMS and not a.is_tensor), None)
    index = next((t for t in tensors if t.startswith("ind")), None)
    keepdim = next((a.name for a in op.args if a.name == "keepdim"), None)
    if lists and dim:
        return Fit(f"Joins {lists[0]} along {dim}?", f"meta.cat({lists[0]}, {dim})")
    if not tensors:
        return None
    x = tensors[0]
    if index and dim and x != index:
        return Fit(
            f"Picks slices of {x} along {dim} by {index} (or gathers: meta.gather)?",
            f"meta.index_select({x}, {dim}, {index})",
        )
    if dim:
        call = f"meta.reduction({x}, {dim}{', ' + keepdim if keepdim else ''})"
        return Fit(f"Reduces {x} over {dim}?", call)
    if len(tensors) >= 2 and any(w in op.name.split("_") for w in ("matmul", "mm", "bmm")):
        a, b = tensors[:2]
        return Fit(f"A matrix product of {a} and {b}?", f"meta.matmul({a}, {b})")
    if len(tensors) == 1:
        return Fit(f"Shaped and typed as {x}?", f"meta.same_as({x})")
    names = ", ".join(tensors)
    return Fit(
        f"Elementwise over {names} (broadcast shape, promoted dtype)?", f"meta.elementwise({names})"
    )


def _tensors(op: spec.OpSchema) -> list[spec.Arg]:
    """The op's plain tensor arguments (no lists, no optional ones)."""
    return [a for a in op.args if a.type == "Tensor"]
