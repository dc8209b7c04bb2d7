"""Column ``ascendc``: the op's own AscendC tiling and kernel, run offline on each case.

Only for an op whose package holds its AscendC sources (a ``--from-cann`` package's
``cann_kernel/``: :mod:`opsdk.cann.kernel.sources`). Per case, on the case's concrete
sizes (static shapes only): the TilingFunc runs for the node the case makes
(:mod:`opsdk.cann.tiling`; a finding fails the cell in layer ``tiling``), the kernel is
built for the case's dtypes and the tiling's key and launched with that tiling
(:mod:`opsdk.cann.kernel`; a finding, with its block, case and source line, or outputs
other than the CPU reference's, fail it in layer ``kernel``). A ``Tensor[]`` argument
or return is a dynamic input's or output's instances, a tensor list to the kernel. What
the stand-ins do not model (a missing identifier, the cube unit, communication) makes
the cell a skip saying so: never a pass.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from pathlib import Path

import torch
from torch._library import custom_ops

from opsdk._runtime import irdef, types
from opsdk.cann import infer, tiling
from opsdk.cann.explore.torch_side import behind_torch
from opsdk.cann.kernel.op import AscendcOp, NotRun
from opsdk.cann.kernel.sources import in_copy, project_of
from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.core.compare import TOLERANCES
from opsdk.harness.core.kernel import call_op
from opsdk.harness.variants.cases import Call, cases, tensors_of


def run(cell: Cell, dump_dir=None) -> None:
    op, spec = cell.op.overload(), cell.op.spec
    ascendc = _op(spec.qualname, bool(spec.mutated_args))
    for case in cases(spec, cell.shapes, cell.column):
        with case.named():
            _run_case(op, spec, ascendc, case.calls[0], case)


def _run_case(op, spec, ascendc: AscendcOp, call: Call, case) -> None:
    ir, sources = ascendc.ir, ascendc.sources
    label = case.label or "the default case"
    outputs = _returned(ir, call_op(op, call, layer="eager"))  # the CPU reference
    given = {ir.ir_name(n): v for n, v in spec.by_name(call.args, call.kwargs).items()}
    data = {i.name: _bytes(given.get(i.name)) for i in ir.inputs}
    try:
        ran = ascendc.run(_tiling_case(ir, given, outputs, ascendc.chip, label), data)
    except NotRun as err:
        raise _not_run(str(err)) from None
    if ran.launch is None:
        raise CellFailure(
            "tiling",
            f"the op's TilingFunc (in {sources.root}): "
            f"{'; '.join(map(str, ran.tiled.findings)) or ran.tiled.status}; fix it in op_host/",
        )
    if ran.launch.findings:
        found = "; ".join(map(str, ran.launch.findings))
        raise CellFailure(
            "kernel",
            f"the op's kernel (in {sources.root}): {found}; fix the AscendC kernel in op_kernel/",
        )
    differ = _compare(ran.launch.outputs, outputs, ran.params, case.tolerances)
    if differ:
        raise CellFailure(
            "kernel",
            f"the kernel's output {differ}; inputs {_inputs(given)}; the kernel (op_kernel/) and "
            f"your reference ({_reference(op, call)}) differ: fix whichever is wrong",
        )


def _compare(launched: dict, outputs: dict, params: dict, tolerances) -> str | None:
    """Where the kernel's outputs (``launched``, bytes by parameter) differ from the CPU
    reference's (``outputs``, by IR name), the output named first (None: they agree)."""
    for p, n in params.items():
        pairs = zip(_each(launched.get(p)), _each(outputs.get(n)), strict=True)  # inputs: none
        for index, (data, want) in enumerate(pairs):
            differ = _differ(_tensor(data, want), want, tolerances)
            if differ:
                return (
                    f"{n}[{index}]: {differ}" if isinstance(outputs[n], list) else f"{n}: {differ}"
                )
    return None


def _differ(got: torch.Tensor, want: torch.Tensor, tolerances) -> str | None:
    """Where the kernel's ``got`` and the reference's ``want`` differ beyond the case's
    tolerances (None: they agree): how many elements, the worst (the furthest past its
    allowance), both values there and the tolerances."""
    rtol, atol = {**TOLERANCES, **tolerances}.get(want.dtype, (0.0, 0.0))
    close = torch.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    allowed = atol + rtol * want.double().abs()
    past = ((got.double() - want.double()).abs() - allowed).nan_to_num(nan=math.inf)
    worst = tuple(
        int(i) for i in torch.unravel_index(past.masked_fill(close, -math.inf).argmax(), want.shape)
    )
    return (
        f"{int((~close).sum())} of {want.numel()} elements differ, the worst at index "
        f"{list(worst)}: kernel {got[worst].item()!r}, reference {want[worst].item()!r} "
        f"({str(want.dtype).removeprefix('torch.')} within rtol {rtol:g}, atol {atol:g}; "
        "specs.py's tolerances=... sets them)"
    )


def _inputs(given: dict) -> str:
    """The case's inputs and attrs as the kernel and the tiling got them (IR names)."""

    def said(value) -> str:
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
        if isinstance(value, list | tuple):
            return f"[{', '.join(map(said, value))}]"
        return "absent" if value is None else repr(value)

    return ", ".join(f"{name} {said(value)}" for name, value in given.items())


def _reference(op, call: Call) -> str:
    """The user's CPU reference as a message names it (``kernels.py: add_reference``):
    the function ``custom_op`` registered for the CPU, else the one the op's call calls
    (torch keeps a ``Library.impl`` kernel out of Python's reach)."""
    fns = getattr(custom_ops._maybe_get_opdef(op), "_backend_fns", {})
    if "cpu" in fns:
        code = behind_torch(fns["cpu"]).__code__
    else:
        dispatching, called = type(op).__call__.__code__, []

        def profile(frame, event, _arg):
            if event == "call" and frame.f_back and frame.f_back.f_code is dispatching:
                called.append(frame.f_code)

        before = sys.getprofile()
        sys.setprofile(profile)
        try:
            op(*call.args, **call.kwargs)
        finally:
            sys.setprofile(before)
        code = called[0] if called else None
    if code is None or code.co_filename.startswith("<"):
        return "kernels.py"
    return f"{Path(code.co_filename).name}: {code.co_name}"


def _not_run(reason: str) -> CellSkipped:
    """The cell's skip saying why it was not run, and that reason as the cell's warning,
    which the terminal lists after the matrix, whole: never a pass, never silent."""
    warnings.warn(f"ascendc: not run: {reason}", stacklevel=2)
    return CellSkipped(f"not run: {reason}")


@functools.cache
def _op(qualname: str, in_place: bool) -> AscendcOp:
    """The op's AscendC sources in its package, run by the stand-ins (its builds once a
    process); a skip saying why where they cannot."""
    for ir in irdef.for_op(qualname):
        found = ir.infer_root and in_copy(ir.op_type, project_of(ir.infer_root))
        if found:
            try:
                return AscendcOp(ir, found, in_place=in_place)
            except NotRun as err:
                raise _not_run(str(err)) from None
    raise _not_run(f"{qualname} has no AscendC sources in its package")


def _tiling_case(ir, given: dict, outputs: dict, chip: str, label: str) -> tiling.Case:
    def node(t: torch.Tensor) -> infer.Given:
        return infer.Given(types.known_dtype(str(t.dtype)).value, tuple(t.shape))

    attrs = []
    for attr in ir.attrs:
        value = given.get(attr.name, attr.default)
        attrs.append(
            types.known_dtype(str(value)).value if isinstance(value, torch.dtype) else value
        )
    return tiling.Case(
        tuple(tuple(map(node, _each(given.get(i.name)))) for i in ir.inputs),
        tuple(node(t) for value in outputs.values() for t in _each(value)),
        tuple(attrs),
        chip=chip,
        label=label,
    )


def _returned(ir: irdef.IrDef, value) -> dict:
    """The CPU reference's outputs by IR output name; a dynamic output's (the schema's
    ``Tensor[]``) as a list."""
    if not any(o.kind == "dynamic" for o in ir.outputs):
        return dict(zip((o.name for o in ir.outputs), tensors_of(value), strict=False))
    values = [value] if len(ir.outputs) == 1 else list(value)
    return {
        o.name: list(v) if o.kind == "dynamic" else v
        for o, v in zip(ir.outputs, values, strict=False)
    }


def _each(value) -> list:
    """A tensor list's tensors, a tensor alone, none for an absent input."""
    return [] if value is None else list(value) if isinstance(value, list | tuple) else [value]


def _bytes(value):
    """An input's bytes as the kernel takes them (a tensor list's, each member's); None
    for an absent one."""
    if isinstance(value, list | tuple):
        return [_bytes(t) for t in value]
    if not isinstance(value, torch.Tensor):
        return None
    # (flat first: a 0-dim tensor, HistogramV2's min, has no byte view of its own)
    return value.detach().reshape(-1).cpu().view(torch.uint8).numpy().tobytes()


def _tensor(data: bytes, like: torch.Tensor) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=like.dtype).reshape(like.shape)
