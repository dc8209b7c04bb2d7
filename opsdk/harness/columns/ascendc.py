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
from opsdk.cann import infer, kernel, tiling
from opsdk.cann.explore.torch_side import behind_torch
from opsdk.cann.kernel.sources import AscendC, in_copy, include_dirs, project_of, unmodelled
from opsdk.cann.opdef import PREFERRED_CHIPS
from opsdk.errors import SpecError
from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.core.compare import TOLERANCES
from opsdk.harness.core.kernel import call_op
from opsdk.harness.variants.cases import Call, cases, tensors_of


def run(cell: Cell, dump_dir=None) -> None:
    op, spec = cell.op.overload(), cell.op.spec
    ir, sources = _sources(spec.qualname)
    reason = unmodelled(sources) or _unsupported(ir, sources, spec)
    if reason:
        raise _not_run(reason)
    library = _tiling(sources)
    chip = infer.chip(ir.chips)
    for case in cases(spec, cell.shapes, cell.column):
        with case.named():
            _run_case(op, spec, ir, sources, library, chip, case.calls[0], case)


def _run_case(op, spec, ir, sources: AscendC, library, chip: str, call: Call, case) -> None:
    label = case.label or "the default case"
    outputs = _returned(ir, call_op(op, call, layer="eager"))  # the CPU reference
    given = {ir.ir_name(n): v for n, v in spec.by_name(call.args, call.kwargs).items()}
    try:
        tiled = library.run(sources.tiling, _tiling_case(ir, given, outputs, chip, label))
    except infer.Unlinked as err:  # a source of the project its tiling calls into
        raise _not_run(f"the tiling, against opsdk's stand-ins, does not load: {err}") from None
    if not tiled.ok:
        raise CellFailure(
            "tiling",
            f"the op's TilingFunc (in {sources.root}): "
            f"{'; '.join(map(str, tiled.findings)) or tiled.status}; fix it in op_host/",
        )
    params = _params(sources, ir)
    dtypes = _dtypes(ir, params, {**given, **outputs})
    compiled = _kernel(sources.entry, dtypes, tiled.tiling_key, tiled.layout, tiled.layouts)
    launch = compiled.launch(
        {p: _gm(given.get(n), _bytes) for p, n in params.items() if n not in outputs},
        {p: _gm(outputs[n], _size) for p, n in params.items() if n in outputs},
        tiled,
        case=label,
        ub_bytes=infer.resources(chip).ub,
    )
    if launch.findings:
        found = "; ".join(map(str, launch.findings))
        raise CellFailure(
            "kernel",
            f"the op's kernel (in {sources.root}): {found}; fix the AscendC kernel in op_kernel/",
        )
    differ = _compare(launch.outputs, outputs, params, case.tolerances)
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


def _sources(qualname: str) -> tuple[irdef.IrDef, AscendC]:
    for ir in irdef.for_op(qualname):
        found = ir.infer_root and in_copy(ir.op_type, project_of(ir.infer_root))
        if found:
            return ir, found
    raise _not_run(f"{qualname} has no AscendC sources in its package")


def _unsupported(ir: irdef.IrDef, sources: AscendC, spec) -> str | None:
    """What the column does not run yet, said (None: it runs)."""
    if infer.chip(ir.chips) not in PREFERRED_CHIPS:  # ops-math's *_apt.cpp: ascend950 only
        return (
            f"{ir.op_type} is built for {', '.join(ir.chips)} only (its OpDef's AddConfig); "
            f"the stand-ins model {PREFERRED_CHIPS[0]}'s vector cores"
        )
    if sources.tiling is None:
        return f"no TilingFunc of {ir.op_type} under {sources.root / 'op_host'} (IMPL_OP_OPTILING)"
    if spec.mutated_args:
        return "an op writing its inputs in place (its kernel's outputs are its inputs)"
    if any(i.value_depend for i in ir.inputs):
        return "value-depend inputs"
    return None


def _params(sources: AscendC, ir: irdef.IrDef) -> dict[str, str]:
    """The kernel's GM parameters (workspace and tiling aside) by the IR input or output
    each is: by position, the inputs then the outputs, as GE passes them (a kernel names
    them as it likes: AddV2's ``x, y, z`` are ``x1, x2, y``)."""
    params = sources.entry.params[:-2]
    names = (*ir.ir_input_names, *(o.name for o in ir.outputs))
    if len(params) != len(names):
        raise _not_run(
            f"{sources.entry.name} takes {len(params)} GM tensors "
            f"({', '.join(params)}), {ir.op_type} has {len(names)} inputs and outputs"
        )
    return dict(zip(params, names, strict=True))


def _dtypes(ir: irdef.IrDef, params: dict[str, str], tensors: dict) -> tuple:
    """``DTYPE_<NAME>`` as opbuild defines them, by the IR's names and the kernel's own:
    a tensor's dtype, an absent optional input's its definition row's (CANN builds the
    kernel per row), unless the stand-in has no element type for it."""
    firsts = {n: _each(tensors.get(n))[:1] for n in params.values()}
    dtypes = {n: str(t[0].dtype).removeprefix("torch.") for n, t in firsts.items() if t}
    absent = kernel.absent_dtypes(dict(ir.dtypes), {n: dtypes.get(n) for n in firsts})
    dtypes |= {n: d.torch for n, d in absent.items() if d.torch in kernel.CTYPES}
    dtypes |= {p: dtypes[n] for p, n in params.items() if n in dtypes}
    return tuple(sorted(dtypes.items()))


def _tiling_case(ir, given: dict, outputs: dict, chip: str, label: str) -> tiling.Case:
    def node(t: torch.Tensor) -> infer.Given:
        return infer.Given(types.dtype(str(t.dtype)).value, tuple(t.shape))

    attrs = []
    for attr in ir.attrs:
        value = given.get(attr.name, attr.default)
        attrs.append(types.dtype(str(value)).value if isinstance(value, torch.dtype) else value)
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


def _gm(value, of):
    """What a launch takes for a tensor, ``of`` it (its bytes, its size); for a tensor
    list (a dynamic input or output), its members."""
    if isinstance(value, list | tuple):
        return [kernel.Member(tuple(t.shape), of(t)) for t in value]
    return of(value)


def _size(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _bytes(t: torch.Tensor | None) -> bytes | None:
    return None if t is None else t.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes()


def _tensor(data: bytes, like: torch.Tensor) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=like.dtype).reshape(like.shape)


@functools.cache
def _tiling(sources: AscendC) -> tiling.TilingLibrary:
    """The op's tiling, built once a process; a build failure skips the cell naming it."""
    try:
        built = tiling.build(sources.tiling, sources.root)
    except infer.CompileFailure as err:
        raise _not_run(f"the tiling, against opsdk's stand-ins, {err}") from None
    return tiling.TilingLibrary(built.library, sources.root)


# One launcher (one worker process) per kernel library: the tiling keys of an entry that
# is no template build the same library and share it.
_LAUNCHERS: dict[Path, kernel.Kernel] = {}


@functools.cache
def _kernel(entry: kernel.Entry, dtypes: tuple, key: int, layout, layouts=()) -> kernel.Kernel:
    """The kernel built for ``dtypes`` and the tiling ``key`` (``layout`` its tiling data,
    ``layouts`` the op's other classes, which other keys' branches name), once a process."""
    root = Path(entry.source).parent.parent
    try:
        dirs = include_dirs(entry)  # other ops' kernel headers, as CANN's build lays them out
        built = kernel.build(
            entry,
            dict(dtypes),
            tiling_key=key,
            layout=layout,
            layouts=layouts,
            include_dirs=dirs,
            root=root,
        )
    except infer.CompileFailure as err:  # ``does not compile: file:line: what``
        raise _not_run(f"the kernel, against opsdk's AscendC stand-in, {err}") from None
    except SpecError as err:  # a dtype or tiling key the stand-in cannot take
        raise _not_run(f"the kernel cannot be built: {err}") from None
    return _LAUNCHERS.setdefault(built.library, kernel.Kernel(built))
