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
import warnings
from pathlib import Path

import torch

from opsdk._runtime import irdef, types
from opsdk.cann import infer, kernel, tiling
from opsdk.cann.kernel.sources import AscendC, in_copy, include_dirs, project_of, unmodelled
from opsdk.cann.opdef import PREFERRED_CHIPS
from opsdk.errors import SpecError
from opsdk.harness.cell import Cell, CellFailure, CellSkipped
from opsdk.harness.core.compare import assert_same
from opsdk.harness.core.kernel import run_op
from opsdk.harness.variants.cases import Call, cases, tensors_of

HINT = "fix the AscendC kernel in op_kernel/ (the CPU reference in kernels.py is the oracle)"


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
    outputs = _returned(ir, run_op(op, call, layer="eager"))  # the CPU reference
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
    tensors = {**given, **outputs}
    # DTYPE_<NAME> as opbuild defines them (the IR's names), and the kernel's own names.
    dtypes = {
        n: str(_each(tensors[n])[0].dtype).removeprefix("torch.")
        for n in params.values()
        if _each(tensors.get(n))  # an absent optional input: no DTYPE_ macro
    }
    dtypes |= {p: dtypes[n] for p, n in params.items() if n in dtypes}
    compiled = _kernel(
        sources.entry, tuple(sorted(dtypes.items())), tiled.tiling_key, tiled.layout, tiled.layouts
    )
    launch = compiled.launch(
        {p: _gm(given.get(n), _bytes) for p, n in params.items() if n not in outputs},
        {p: _gm(outputs[n], _size) for p, n in params.items() if n in outputs},
        tiled,
        case=label,
        ub_bytes=infer.resources(chip).ub,
    )
    if launch.findings:
        found = "; ".join(map(str, launch.findings))
        raise CellFailure("kernel", f"the op's kernel (in {sources.root}): {found}; {HINT}")
    actual = [
        _tensor(data, like)
        for p, n in params.items()
        if n in outputs
        for data, like in zip(_each(launch.outputs[p]), _each(outputs[n]), strict=True)
    ]
    assert_same(
        actual,
        [t for n in params.values() if n in outputs for t in _each(outputs[n])],
        what="the kernel's outputs",
        layer="kernel",
        hint=HINT,
        tolerances=case.tolerances,
    )


def _not_run(reason: str) -> CellSkipped:
    """The cell's skip saying why it was not run, and that reason as the cell's warning,
    which the terminal lists after the matrix: never a pass, never silent."""
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
    except infer.BuildFailure as err:
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
    except infer.BuildFailure as err:  # ``does not compile: file:line: what``
        raise _not_run(f"the kernel, against opsdk's AscendC stand-in, {err}") from None
    except SpecError as err:  # a dtype or tiling key the stand-in cannot take
        raise _not_run(f"the kernel cannot be built: {err}") from None
    return _LAUNCHERS.setdefault(built.library, kernel.Kernel(built))
