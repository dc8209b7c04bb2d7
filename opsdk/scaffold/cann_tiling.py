"""What ``--from-cann`` takes from an op's own tiling: the workspace an ``--updatable`` op
gets on replay, and the cases of the tiling's own host tests (:func:`tested`).

npugraph_ex's update table sizes the op's workspace once, for every value of its updated
arguments (``opsdk.updatable``); offline that is ``WORKSPACE_BYTES`` of the package's
``updatable.py``. Where the op's TilingFunc is beside its definition, the number is what
that tiling asks (:mod:`opsdk.cann.tiling`, ``GetWorkspaceSizes`` summed): run for each
dtype row the definition declares, at the sizes its specs use, the largest.
"""

from __future__ import annotations

from pathlib import Path

from opsdk._runtime import types
from opsdk.cann import infer, sizes, tiling, ut_cases
from opsdk.scaffold.cann_infer import _value
from opsdk.scaffold.cann_torch import TorchSide

__all__ = ["tested", "workspace"]


def tested(source: Path, side: TorchSide) -> tuple[tiling.Case, ...]:
    """The cases the op's own host tiling tests give it (:mod:`opsdk.cann.ut_cases`, in
    ``tests/`` of the op's folder), smallest first; none without a tiling beside
    ``source``."""
    found = tiling.find(side.ir.op_type, Path(source).resolve().parent)
    if found is None:
        return ()
    return tuple(ut_cases.cases(side.op, ut_cases.folder_of(found.sources[0])))


def workspace(source: Path, side: TorchSide) -> int | None:
    """The bytes of workspace ``side``'s op asks for its specs' cases (the value inputs
    at 1); None where no tiling is beside ``source``, it does not compile here, or it
    tiles none of them (``WORKSPACE_BYTES`` then stays opsdk's default)."""
    root = Path(source).resolve().parent
    found = tiling.find(side.ir.op_type, root)
    if found is None:
        return None
    try:
        library = tiling.TilingLibrary(tiling.build(found, root).library, root)
    except (infer.CompileFailure, OSError):
        return None
    try:
        runs = [library.run(found, case) for case in _cases(side)]
    finally:
        library.close()
    return tiling.workspace_size(runs) if any(r.status == 0 for r in runs) else None


def _cases(side: TorchSide) -> list[tiling.Case]:
    """One case per declared dtype row: tensor inputs at the specs' sizes, value inputs 1,
    outputs shaped as the first input, attrs at their defaults."""
    ir, op = side.ir, side.op
    tensors = [i.name for i in ir.inputs if not i.value_depend]
    shapes = sizes.choose(op, tensors, None).shapes
    width = max((len(row) for row in op.dtypes.values()), default=1)
    found = []
    for row in range(width):

        def dtype(name: str, row: int = row) -> int:
            declared = op.dtypes.get(name) or ("DT_FLOAT",)
            return types.DTYPES[declared[row % len(declared)]].value

        inputs = tuple(
            tuple(_value(dtype(i.name), 1))
            if i.value_depend
            else (infer.Given(dtype(i.name), shapes[i.name]),)
            for i in ir.inputs
        )
        first = next((g.shape for given in inputs for g in given), (1,))
        outputs = tuple(infer.Given(dtype(o.name), first) for o in ir.outputs)
        found.append(tiling.Case(inputs, outputs, tuple(a.default for a in ir.attrs)))
    return found
