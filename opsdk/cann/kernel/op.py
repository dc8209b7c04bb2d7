"""One op type's AscendC tiling and kernel run per case by the stand-ins: what the
``ascendc`` column of ``opsdk check`` and the ``ascendc`` check of ``opsdk audit --ir``
both run (one engine, so a verdict means the same in both).

A case is the node as GE hands it to the tiling (:class:`~opsdk.cann.tiling.Case`: per
IR input its instances, the outputs, the attrs in IR order). The TilingFunc runs for it;
where it succeeds the kernel is built for the case's dtypes and the tiling's key (each
build once, on disk and per :class:`AscendcOp`) and launched with the tiling's data on
the inputs' bytes (given, else made: normal floats, integers and bools zero, a valid
index of any dim; the answer names the inputs of made integers, on which what a kernel
does is no verdict) and outputs sized as the case's. What the stand-ins do not model or
cannot build raises :class:`NotRun` with the reason: never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from opsdk._runtime import types
from opsdk.cann import infer, tiling
from opsdk.cann.kernel.build import CTYPES, absent_dtypes, build
from opsdk.cann.kernel.run import Filled, Kernel, Launch, Member
from opsdk.cann.kernel.sources import AscendC, filled, include_dirs, unmodelled
from opsdk.cann.opdef import PREFERRED_CHIPS
from opsdk.cann.tiling import TilingRun
from opsdk.errors import SpecError

__all__ = ["AscendcOp", "NotRun", "Ran", "output_counts"]

_SEED = 0  # made inputs are the same every run: a finding reproduces, a cached verdict holds


class NotRun(Exception):
    """What the stand-ins do not model or cannot build for the op (the reason): a skip
    saying so, never a pass."""


@dataclass(frozen=True)
class Ran:
    """One case run: the tiling's answer and, where it tiled, the launch (None: the
    tiling refused or found a defect: see ``tiled``); ``params`` the kernel's GM
    parameters by the IR input or output each is."""

    tiled: TilingRun
    launch: Launch | None
    params: dict[str, str]
    # the inputs whose integers (or bools) were made, not given: zeros, which may be no
    # value the op takes (a group count it divides by), so what the kernel does on them
    # says nothing certain
    made_integers: tuple[str, ...] = ()


class AscendcOp:
    """``sources`` of the op type ``ir`` defines, run case by case; its tiling library
    and kernels (worker processes) live until :meth:`close`."""

    def __init__(self, ir, sources: AscendC, *, in_place: bool = False):
        self.ir, self.sources = ir, sources
        reason = unmodelled(sources) or _unsupported(ir, sources, in_place)
        if reason:
            raise NotRun(reason)
        assert sources.tiling is not None  # _unsupported refuses an op without one
        self.tiling_source: tiling.TilingSource = sources.tiling
        self.chip = infer.chip(ir.chips)
        self._tiling: tiling.TilingLibrary | None = None
        self._kernels: dict[tuple, Kernel | NotRun] = {}
        self._launchers: dict[Path, Kernel] = {}  # tiling keys building one library share it
        # OpDef's InitValue outputs: the runtime fills them before the kernel runs, not poison
        self.starts = filled(sources, ir.op_type)

    def run(self, case: tiling.Case, data: Mapping[str, object] | None = None) -> Ran:
        """``case`` tiled and, where that succeeds, launched; ``data`` by IR input name:
        its bytes (a dynamic input's, a list of each instance's), else made."""
        return self.launch(case, self.tile(case), data)

    def tile(self, case: tiling.Case) -> TilingRun:
        """What the op's TilingFunc sets for ``case`` (a bench times it apart)."""
        try:
            return self.tiling().run(self.tiling_source, case)
        except infer.Unlinked as err:  # a source of the project its tiling calls into
            raise NotRun(f"the tiling, against opsdk's stand-ins, does not load: {err}") from None

    def launch(
        self, case: tiling.Case, tiled: TilingRun, data: Mapping[str, object] | None = None
    ) -> Ran:
        """The kernel built for ``case`` and ``tiled`` (its tiling of it) and launched, where
        the tiling succeeded; ``data`` as :meth:`run` takes it."""
        params = self.params()
        if not tiled.ok:
            return Ran(tiled, None, params)
        inputs = dict(zip(self.ir.ir_input_names, case.inputs, strict=True))
        outputs, at = {}, 0
        for output, count in zip(self.ir.outputs, output_counts(self.ir, case), strict=True):
            given = case.outputs[at : at + count]
            outputs[output.name] = list(given) if output.kind == "dynamic" else given[0]
            at += count
        data = data or {}
        compiled = self._kernel(self._dtypes(params, inputs, outputs), tiled)
        launch = compiled.launch(
            {
                p: _input(inputs[n], data.get(n), self._dynamic(n))
                for p, n in params.items()
                if n in inputs
            },
            {p: _output(outputs[n], self.starts.get(n)) for p, n in params.items() if n in outputs},
            tiled,
            case=case.label or str(case),
            ub_bytes=infer.resources(case.chip).ub,
        )
        made = [
            n
            for n, instances in inputs.items()
            if data.get(n) is None and any(_integral(g.dtype) and g.data is None for g in instances)
        ]
        return Ran(tiled, launch, params, tuple(made))

    def tiling(self) -> tiling.TilingLibrary:
        """The op's tiling, built once (on disk: once a machine)."""
        if self._tiling is None:
            try:
                built = tiling.build(self.tiling_source, self.sources.root)
            except infer.CompileFailure as err:
                raise NotRun(f"the tiling, against opsdk's stand-ins, {err}") from None
            self._tiling = tiling.TilingLibrary(built.library, self.sources.root)
        return self._tiling

    def params(self) -> dict[str, str]:
        """The kernel's GM parameters (workspace and tiling aside) by the IR input or output
        each is: by position, the inputs then the outputs, as GE passes them (a kernel
        names them as it likes: AddV2's ``x, y, z`` are ``x1, x2, y``)."""
        params = self.sources.entry.params[:-2]
        names = (*self.ir.ir_input_names, *(o.name for o in self.ir.outputs))
        if len(params) != len(names):
            raise NotRun(
                f"{self.sources.entry.name} takes {len(params)} GM tensors "
                f"({', '.join(params)}), {self.ir.op_type} has {len(names)} inputs and outputs"
            )
        return dict(zip(params, names, strict=True))

    def close(self) -> None:
        """End the op's worker processes."""
        for launcher in self._launchers.values():
            launcher.close()
        if self._tiling is not None:
            self._tiling.close()
        self._tiling, self._kernels, self._launchers = None, {}, {}

    def _dynamic(self, name: str) -> bool:
        return any(i.name == name and i.kind == "dynamic" for i in self.ir.inputs)

    def _dtypes(self, params: dict[str, str], inputs: dict, outputs: dict) -> tuple:
        """``DTYPE_<NAME>`` as opbuild defines them, by the IR's names and the kernel's own:
        a tensor's dtype, an absent optional input's its definition row's (CANN builds the
        kernel per row), unless the stand-in has no element type for it."""
        firsts = {n: _each({**inputs, **outputs}.get(n))[:1] for n in params.values()}
        dtypes = {n: _torch(g[0].dtype) for n, g in firsts.items() if g}
        absent = absent_dtypes(dict(self.ir.dtypes), {n: dtypes.get(n) for n in firsts})
        dtypes |= {n: d.torch for n, d in absent.items() if d.torch in CTYPES}
        dtypes |= {p: dtypes[n] for p, n in params.items() if n in dtypes}
        return tuple(sorted(dtypes.items()))

    def _kernel(self, dtypes: tuple, tiled: TilingRun) -> Kernel:
        """The kernel built for ``dtypes`` and the tiling's key (its data's layout, and the
        op's other classes, which other keys' branches name), once: a build that failed
        is not tried again."""
        key = (dtypes, tiled.tiling_key, tiled.layout, tiled.layouts)
        if key not in self._kernels:
            self._kernels[key] = self._built(dict(dtypes), tiled)
        found = self._kernels[key]
        if isinstance(found, NotRun):
            raise found
        return found

    def _built(self, dtypes: dict, tiled: TilingRun) -> Kernel | NotRun:
        entry = self.sources.entry
        try:
            built = build(
                entry,
                dtypes,
                tiling_key=tiled.tiling_key,
                layout=tiled.layout,
                layouts=tiled.layouts,
                # other ops' kernel headers, laid out as CANN's build does
                include_dirs=include_dirs(entry),
                root=Path(entry.source).parent.parent,
            )
        except infer.CompileFailure as err:  # ``does not compile: file:line: what``
            return NotRun(f"the kernel, against opsdk's AscendC stand-in, {err}")
        except SpecError as err:  # a dtype or tiling key the stand-in cannot take
            return NotRun(f"the kernel cannot be built: {err}")
        return self._launchers.setdefault(built.library, Kernel(built))


def output_counts(ir, case: tiling.Case) -> tuple[int, ...]:
    """Per IR output its instances among the case's outputs: as the case states them,
    else each dynamic output an equal share."""
    if case.output_counts:
        return case.output_counts
    dynamic = sum(o.kind == "dynamic" for o in ir.outputs)
    each = (len(case.outputs) - len(ir.outputs) + dynamic) // max(dynamic, 1)
    return tuple(each if o.kind == "dynamic" else 1 for o in ir.outputs)


def _unsupported(ir, sources: AscendC, in_place: bool) -> str | None:
    """What the engine does not run yet, said (None: it runs)."""
    if infer.chip(ir.chips) not in PREFERRED_CHIPS:  # ops-math's *_apt.cpp: ascend950 only
        return (
            f"{ir.op_type} is built for {', '.join(ir.chips)} only (its OpDef's AddConfig); "
            f"the stand-ins model {PREFERRED_CHIPS[0]}'s vector cores"
        )
    if sources.tiling is None:
        return f"no TilingFunc of {ir.op_type} under {sources.root / 'op_host'} (IMPL_OP_OPTILING)"
    if in_place:
        return "an op writing its inputs in place (its kernel's outputs are its inputs)"
    if any(i.value_depend for i in ir.inputs):
        return "value-depend inputs"
    return None


def _input(instances: tuple, data, dynamic: bool):
    """What a launch takes for an input: its bytes (a tensor list's members), made where
    ``data`` gives none; None for an absent optional input."""
    if dynamic:
        given = list(data) if data is not None else [None] * len(instances)
        return [
            Member(tuple(g.shape), _made(g) if d is None else d)
            for g, d in zip(instances, given, strict=True)
        ]
    if not instances:
        return None
    return data if data is not None else _made(instances[0])


def _output(given, fill: float | None = None):
    """What a launch takes for an output: its size in bytes (a tensor list's members), or
    (``fill``: its OpDef's InitValue) a :class:`Filled` of that value in its dtype."""
    if isinstance(given, list):
        return [Member(tuple(g.shape), _size(g)) for g in given]
    if fill is None:
        return _size(given)
    value = torch.tensor([fill], dtype=getattr(torch, _torch(given.dtype)))
    return Filled(_size(given), value.view(torch.uint8).numpy().tobytes())


def _made(given: infer.Given) -> bytes:
    """Bytes of a tensor of ``given``'s shape: its host data (a value-depend input's),
    else normal floats, integers and bools zero (an index valid in any dim)."""
    if given.data is not None:
        return given.data
    dtype = getattr(torch, _torch(given.dtype))
    shape = tuple(given.shape)
    if dtype.is_floating_point:
        generator = torch.Generator().manual_seed(_SEED)
        values = torch.randn(shape, generator=generator).to(dtype)
    else:
        values = torch.zeros(shape, dtype=dtype)
    return values.contiguous().view(torch.uint8).numpy().tobytes()


def _integral(ge_value: int) -> bool:
    return not getattr(torch, _torch(ge_value)).is_floating_point


def _size(given: infer.Given) -> int:
    return math.prod(max(d, 0) for d in given.shape) * _element_size(given.dtype)


def _element_size(ge_value: int) -> int:
    return torch.empty((), dtype=getattr(torch, _torch(ge_value))).element_size()


def _torch(ge_value: int) -> str:
    """The torch dtype name of a GE dtype number (NotRun when the stand-in has no element
    type for it)."""
    row = types.BY_GE_VALUE.get(ge_value)
    if row is None or row.torch is None or row.torch not in CTYPES:
        named = row.ge if row else ge_value
        raise NotRun(f"dtype {named} has no AscendC element type in the stand-in")
    return row.torch


def _each(value) -> list:
    """A tensor list's instances, a tensor alone, none for an absent input."""
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
