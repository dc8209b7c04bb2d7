"""Where an op's AscendC sources are, in a project or a ``--from-cann`` package's copy of
one: its ``op_host`` tiling and its ``op_kernel`` entry (the ``__global__ __aicore__``
function named after the op type in snake_case, as CANN's opbuild names it), and why
one the stand-ins do not model is not run (the cube unit, communication, arch35).

A package keeps the copy in ``cann_kernel/`` beside its ``cann_infer/`` (the folder its
IR's ``infer_root`` names), the project's ``op_host``/``op_kernel`` layout kept.

A kernel may include another op's kernel headers as ``../<op>/x.h`` (ops-nn's foreach
kernels reach ``foreach_utils``, ``add_rms_norm`` reaches ``rms_norm``): CANN's build
lays each op's ``op_kernel`` out as ``<build>/<op>``. :func:`include_dirs` gives the
folder where those names resolve the same way.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from opsdk import cann
from opsdk._runtime import irdef, locator
from opsdk.cann.aclnn import _snake
from opsdk.cann.kernel.build import Entry, _without_comments, entry_of
from opsdk.cann.tiling import TilingSource
from opsdk.cann.tiling import find as find_tiling
from opsdk.errors import SpecError

__all__ = [
    "FOLDER",
    "AscendC",
    "definition",
    "entry_name",
    "filled",
    "find",
    "has_sources",
    "in_copy",
    "include_dirs",
    "project_of",
    "sibling_kernels",
    "unmodelled",
]

FOLDER = "cann_kernel"  # a package's copy of the op's AscendC project
ARCH35 = "arch35"  # the folder of kernels for arch35's MicroAPI/SIMT, which are not modelled

_NOT_MODELLED = "which opsdk's stand-ins do not model"
_SIBLING = re.compile(r'^\s*#\s*include\s*"\.\./(\w+)/[^"]+"', re.M)  # ``../<op>/x.h``
_SOURCE_SUFFIXES = frozenset({".cpp", ".h", ".hpp"})
# What the stand-ins do not model, by what a kernel or tiling source names.
_UNMODELLED = (
    (
        re.compile(r"\bMatmul(?:Impl|Type)?\b|matmul_intf\.h|\bMmad\b"),
        "uses the cube unit (Matmul)",
    ),
    (re.compile(r"\bhccl\b|\bHccl\w*|\bmc2\b", re.I), "uses communication (hccl/mc2)"),
    (re.compile(r"\bmatmul_tiling\b"), "its tiling uses matmul_tiling"),
    (
        re.compile(r"\bnlohmann::json\b"),
        "its tiling reads the compile info JSON CANN's op compiler writes (not made offline)",
    ),
)


@dataclass(frozen=True)
class AscendC:
    """An op type's AscendC sources: its project folder, its tiling (None: none
    registered) and its kernel entry."""

    root: Path
    tiling: TilingSource | None
    entry: Entry


def definition(root: Path, op_type: str) -> cann.CannOp | None:
    """``op_type``'s OpDef in the project ``root`` (``op_host/*_def.cpp``; None without a
    readable one: a file including headers a copy lacks is passed over)."""
    for path in sorted((Path(root) / "op_host").glob("*_def.cpp")):
        try:
            for op in cann.read(path, [op_type]):
                return op
        except SpecError:
            continue
    return None


def filled(sources: AscendC, op_type: str) -> dict[str, float]:
    """The outputs (IR names) the runtime fills before ``op_type``'s kernel runs, and
    with what: its OpDef's ``.InitValue`` (none without a readable OpDef: its outputs
    start as poison)."""
    found = definition(sources.root, op_type)
    return found.init_values if found else {}


def project_of(infer_root: str | Path) -> Path:
    """The copy of the AscendC project beside a package's ``cann_infer`` folder."""
    return Path(infer_root).with_name(FOLDER)


def entry_name(op_type: str) -> str:
    """The name of ``op_type``'s kernel entry (and of its source file, by convention)."""
    return _snake(op_type)


def find(op_type: str, root: Path) -> AscendC | None:
    """``op_type``'s sources under the project ``root`` (holding ``op_host`` and
    ``op_kernel``), None without a kernel entry for it; an ``arch35`` entry only where the
    folder holds no other (:func:`unmodelled` says why it is not run)."""
    kernels = Path(root) / "op_kernel"
    if not kernels.is_dir():
        return None
    name = entry_name(op_type)
    candidates = sorted(kernels.glob("*.cpp"), key=lambda p: p.stem != name)
    candidates += sorted((kernels / ARCH35).rglob("*.cpp"), key=lambda p: p.stem != name)
    for path in candidates:
        if "__aicore__" not in path.read_text(errors="replace"):
            continue
        entry = entry_of(path)
        if entry.name == name:
            return AscendC(Path(root), _tiling_of(op_type, Path(root)), entry)
    return None


def _tiling_of(op_type: str, root: Path) -> TilingSource | None:
    """``op_type``'s tiling: in its project's ``op_host``, else in another op's beside it
    (a family shares one tiling file: ops-nn registers GemmaRmsNorm's in rms_norm's)."""
    host = root / "op_host"
    tiling = find_tiling(op_type, host) if host.is_dir() else None
    others = sorted(root.parent.glob("*/op_host"))
    return tiling or next(
        filter(None, (find_tiling(op_type, o) for o in others if o != host)), None
    )


def in_copy(op_type: str, copy: Path) -> AscendC | None:
    """``op_type``'s sources in a package's copy of its project: at its top, or where the
    project sits below the repository's shared headers the copy keeps."""
    folders = sorted(Path(copy).rglob("op_kernel"), key=lambda p: len(p.parts))
    return next(filter(None, (find(op_type, f.parent) for f in folders)), None)


def has_sources(spec) -> bool:
    """Whether the op ``spec`` (an OpSchema) has AscendC sources in its package: the
    ``ascendc`` column's selection."""
    return any(
        ir.infer_root and in_copy(ir.op_type, project_of(ir.infer_root))
        for ir in irdef.for_op(spec.qualname)
    )


def unmodelled(sources: AscendC) -> str | None:
    """Why the stand-ins cannot run the op's sources (None: they may): what its kernel
    folder's or tiling's files name."""
    if ARCH35 in sources.entry.source.relative_to(sources.root.resolve()).parts:
        return f"{sources.entry.source.name} is an arch35 (MicroAPI/SIMT) kernel, {_NOT_MODELLED}"
    files = [*sorted(sources.entry.source.parent.glob("*.[ch]*"))]
    if sources.tiling is not None:
        files += list(sources.tiling.sources)
    for path in files:
        text = _without_comments(path.read_text(errors="replace"))
        for pattern, reason in _UNMODELLED:
            found = pattern.search(text)
            if found:
                return f"{path.name} {reason} ({found[0]!r}), {_NOT_MODELLED}"
    return None


def sibling_kernels(entry: Entry) -> dict[str, Path]:
    """The other ops' kernel folders ``entry``'s kernel folder includes as ``../<op>/x.h``
    (transitively), by op folder name: those of the ops beside its own op folder."""
    op = entry.source.parent.parent
    found: dict[str, Path] = {}
    todo = [entry.source.parent]
    while todo:
        for path in sorted(todo.pop().rglob("*")):
            if path.suffix not in _SOURCE_SUFFIXES or ARCH35 in path.parts:
                continue
            for name in _SIBLING.findall(path.read_text(errors="replace")):
                kernels = op.parent / name / "op_kernel"
                if name not in found and kernels.is_dir():
                    found[name] = kernels.resolve()
                    todo.append(kernels)
    return found


def include_dirs(entry: Entry) -> tuple[Path, ...]:
    """The include folder where ``../<op>/x.h`` finds op ``<op>``'s kernel folder as CANN's
    build lays it out: ``<folder>/_`` beside a link ``<folder>/<op>`` to each of
    :func:`sibling_kernels` (made once under opsdk's cache); none without siblings."""
    siblings = sibling_kernels(entry)
    if not siblings:
        return ()
    key = hashlib.sha256(repr(sorted((n, str(p)) for n, p in siblings.items())).encode())
    folder = locator.cache_root() / "kernel" / f"layout_{key.hexdigest()[:16]}"
    (folder / "_").mkdir(parents=True, exist_ok=True)
    for name, kernels in siblings.items():
        try:
            (folder / name).symlink_to(kernels, target_is_directory=True)
        except FileExistsError:  # made before, or by a concurrent build
            pass
    return (folder / "_",)
