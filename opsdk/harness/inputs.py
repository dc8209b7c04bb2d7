"""Sample inputs for an op, derived from its schema.

Each shape mode has a call plan: several calls with fresh values. Static and
mark_static keep one shape (so a recompile is a bug); dynamic changes the sizes
between calls (so a recompile means a shape was specialized).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from opsdk.spec import Arg, OpSpec

PLAN_SHAPES = {
    "static": [(2, 3), (2, 3), (2, 3)],
    "mark_static": [(2, 3), (2, 3), (2, 3)],
    "dynamic": [(3, 4), (5, 7), (4, 9)],
}

_SCALAR_SAMPLES = {
    "int": 2,
    "SymInt": 2,
    "float": 0.5,
    "Scalar": 0.5,
    "bool": True,
    "str": "",
    "ScalarType": torch.float32,
}


@dataclass
class Call:
    """One call's arguments (CPU tensors; the runner moves them to the device)."""

    args: list
    kwargs: dict


def call_plan(spec: OpSpec, shapes: str) -> list[Call]:
    return [_call(spec, shape, seed) for seed, shape in enumerate(PLAN_SHAPES[shapes])]


def _call(spec: OpSpec, shape: tuple[int, ...], seed: int) -> Call:
    gen = torch.Generator().manual_seed(1234 + seed)
    args, kwargs = [], {}
    for arg in spec.args:
        value = _value(arg, shape, gen)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return Call(args, kwargs)


def _value(arg: Arg, shape, gen):
    if arg.is_tensor:
        if arg.is_list:
            return [torch.randn(shape, generator=gen) for _ in range(2)]
        return torch.randn(shape, generator=gen)
    if arg.has_default:
        return arg.default
    if arg.is_optional:
        return None
    base = arg.type.split("[")[0]
    sample = _SCALAR_SAMPLES.get(base)
    if arg.is_list:
        return [sample] * (arg.size or 1)
    return sample


def map_tensors(value, fn):
    """Apply ``fn`` to every tensor in a nested args structure."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def tensors_of(value) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    map_tensors(value, found.append)
    return found


def on_device(call: Call, device: str) -> Call:
    """A copy of ``call`` with fresh tensors on ``device`` (inputs may be mutated)."""
    move = lambda t: t.clone().to(device)  # noqa: E731
    return Call(map_tensors(call.args, move), map_tensors(call.kwargs, move))
