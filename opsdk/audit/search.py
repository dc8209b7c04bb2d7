"""A case for an op whose derived case its Meta function refuses, found by following
the Meta function's own errors.

The Meta function checks its arguments one statement after another (ranks, dtypes,
divisibility, ranges), so how far a refused call got is where it raised: the lines of
the Meta file's frames, outermost first. From the case (or the same with every tensor
of one of a few sizes, if that gets further), each round tries every
single change of one argument (a tensor's rank, sizes or dtype, an optional tensor given
or left out, an int's or int list's value), those of the arguments the last error names
first, and keeps the first that gets further, until the Meta function takes the call or
no change gets further. What it finds is a case the Meta
function accepts, reported as derived: it proves the fake and converter checks can run,
never that the op supports it.
"""

from __future__ import annotations

import dataclasses

import torch

from opsdk._runtime import inputs, spec
from opsdk.audit.cases import rebuilt
from opsdk.audit.checks import fake_outputs, first_call
from opsdk.errors import SpecError
from opsdk.harness.variants.cases import cases

__all__ = ["BUDGET", "search"]

BUDGET = 400  # Meta calls per op, at most
_SHAPES = ((4,), (2, 4), (4, 2), (4, 4), (2, 2, 4), (2, 4, 4), (2, 2, 2, 4), (2, 4, 2, 4))
_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int32, torch.int64)
_INTS = (0, 1, -1, 2, 4, 8)
_INT_LISTS = ([0, 1], [1, 0], [0, 1, 2], [0, 2, 1], [2, 4], [4], [1], [2, 2, 4], [4, 4, 4])


def search(audit_op, meta_file: str) -> bool:
    """Replace ``audit_op``'s first case, when the Meta function refuses it, by one it
    takes, if the search finds one within :data:`BUDGET` calls (True)."""
    op, op_spec = audit_op.op, spec.of(audit_op.op)
    current = audit_op.cases[0]
    reached, said = _reach(op, op_spec, current, meta_file)
    budget = BUDGET
    if reached is not None:  # sizes that match each other may get further from the start
        for dims in _SHAPES:
            budget -= 1
            uniform = _uniform(op_spec, current, dims)
            got, message = _reach(op, op_spec, uniform, meta_file)
            if got is None or (reached is not None and got > reached):  # None: the end
                current, reached, said = uniform, got, message
            if got is None:
                break
    while reached is not None and budget > 0:
        step = None
        for variant in _variants(op_spec, current, said):  # the first change that helps
            budget -= 1
            got, message = _reach(op, op_spec, variant, meta_file)
            if got is None or got > reached:
                step = (variant, got, message)
                break
            if budget <= 0:
                break
        if step is None:
            break
        current, reached, said = step
    taken = reached is None and current is not audit_op.cases[0]
    if taken:
        audit_op.cases = [current]
    inputs.redeclare(op, audit_op.cases, non_contiguous=False)
    return taken


def _reach(op, op_spec, support, meta_file: str) -> tuple[tuple[int, ...] | None, str]:
    """``(None, "")`` when the Meta function takes ``support``'s first call, else how far
    it got (the lines of its file's frames where it raised, outermost first; () before
    it) and what it said."""
    try:
        inputs.redeclare(op, [support], non_contiguous=False)
        call = first_call(cases(op_spec, "static", "eager")[0])
    except (SpecError, ValueError, TypeError) as err:
        return (), str(err)
    try:
        fake_outputs(op, call)
    except Exception as err:  # noqa: BLE001 - any refusal
        tb, lines = err.__traceback__, []
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == meta_file:
                lines.append(tb.tb_lineno)
            tb = tb.tb_next
        return tuple(lines), str(err)
    return None, ""


def _uniform(op_spec, support, dims):
    """``support`` with every tensor of sizes ``dims``."""
    values = op_spec.by_name(support.args, support.kwargs)
    return rebuilt(
        op_spec,
        {
            name: dataclasses.replace(v, dims=dims) if isinstance(v, inputs.TensorSpec) else v
            for name, v in values.items()
        },
    )


def _variants(op_spec, support, said: str):
    """Every support that differs from ``support`` in one argument, those of the
    arguments the Meta function's last error names first."""
    values = op_spec.by_name(support.args, support.kwargs)
    words = said.lower()
    named = sorted(
        (a for a in op_spec.args if a.name in values),
        key=lambda a: a.name.lower() not in words and a.name.split("_")[0].lower() not in words,
    )
    for arg in named:
        for other in _others(arg, values[arg.name]):
            yield rebuilt(op_spec, values | {arg.name: other})


def _others(arg, value):
    if isinstance(value, inputs.TensorSpec):
        for dims in _SHAPES:
            if dims != tuple(value.dims):
                yield dataclasses.replace(value, dims=dims)
        for dtype in _DTYPES:
            if dtype != value.dtype:
                yield dataclasses.replace(value, dtype=dtype)
        if arg.is_optional:
            yield None
    elif isinstance(value, list) and value and isinstance(value[0], inputs.TensorSpec):
        for first in _others(arg, value[0]):
            if first is not None:
                yield [first] * len(value)
    elif value is None and arg.is_tensor and not arg.is_list:
        yield inputs.TensorSpec((2, 4), torch.float32)
    elif arg.type.rstrip("?") in ("int", "SymInt") and not isinstance(value, bool):
        yield from (v for v in _INTS if v != value)
    elif arg.type.rstrip("?").startswith(("int[", "SymInt[")):
        yield from (v for v in _INT_LISTS if v != value and (not arg.size or len(v) == arg.size))
