"""Run an op's TilingFunc from Python for one case (ctypes, in a worker process by
default: a crash of the C++ is a finding about the op, not opsdk's end) and judge what it
set against the chip.

A case states the node as GE hands it to the tiling: per IR input its instances (dtype,
shape, a value-depend input's host data), the outputs' dtypes and shapes, the attrs in IR
order, the chip (``cann/infer/chip.py``'s table) and, under npugraph_ex's limit-cores
scope, the cores the op may use: the platform API then reports those counts. The answer
is a :class:`TilingRun`: block dim, tiling key, workspace sizes, the tiling data's bytes
and, for a class declared with ``BEGIN_TILING_DATA_DEF``, its layout, with the findings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from opsdk.cann.infer.call import Crashed, Given, Library, Unlinked, _request, logged
from opsdk.cann.infer.chip import resources, soc_version
from opsdk.cann.infer.sources import Function
from opsdk.cann.tiling.build import environ
from opsdk.cann.tiling.sources import TilingSource

__all__ = [
    "CAPACITY",
    "Case",
    "Field",
    "Finding",
    "TilingLayout",
    "TilingLibrary",
    "TilingRun",
    "workspace_size",
]

# The tiling data's capacity when the registration states none (``.Tiling(f, size)``):
# opsdk's assumption of what GE allocates, the bound of the "longer than capacity" finding.
CAPACITY = 16 * 1024
# AddressSanitizer's report: what went wrong, the access, a frame naming a source line.
_SANITIZER = re.compile(r"ERROR: AddressSanitizer: ([\w-]+)")
_ACCESS = re.compile(r"^(READ|WRITE) of size (\d+)")
_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (.+?) (\S+:\d+)$", re.M)


@dataclass(frozen=True)
class Case:
    """One node to tile: ``inputs`` per IR input its instances ([] for an absent optional
    one), ``outputs`` one per output (dtype and shape), ``attrs`` in IR order (None:
    unset), the chip by ``AddConfig`` name, ``core_limit`` (cube cores, vector cores) as
    npugraph_ex's ``limit_core_num`` scope sets them (None: the chip's), ``label`` what a
    finding calls the case; ``output_counts`` per IR output its instances among
    ``outputs`` (a dynamic output's; empty: one each)."""

    inputs: tuple[tuple[Given, ...], ...]
    outputs: tuple[Given, ...]
    attrs: tuple = ()
    chip: str = "ascend910b"
    core_limit: tuple[int, int] | None = None
    deterministic: bool = False
    label: str = ""
    output_counts: tuple[int, ...] = ()

    def __str__(self) -> str:
        if self.label:
            return self.label
        shapes = ", ".join(
            f"{list(g.shape)}" + (f"={g.data.hex()}" if g.data else "")
            for given in self.inputs
            for g in given
        )
        attrs = f", attrs {list(self.attrs)}" if self.attrs else ""
        return f"inputs {shapes}{attrs} on {self.chip}" + (
            f" limited to {self.core_limit}" if self.core_limit else ""
        )


@dataclass(frozen=True)
class Field:
    """A field of a tiling data class: C type, element count (1: a scalar), byte offset,
    and for a struct field (``TILING_DATA_FIELD_DEF_STRUCT``) the struct's layout."""

    name: str
    ctype: str
    count: int
    offset: int
    nested: TilingLayout | None = None


@dataclass(frozen=True)
class TilingLayout:
    """A ``BEGIN_TILING_DATA_DEF`` class as the kernel receives it: its name, fields in
    order, size in bytes (what ``GetDataSize`` reports)."""

    struct: str
    fields: tuple[Field, ...]
    size: int


@dataclass(frozen=True)
class Finding:
    """A certain defect of a tiling for one case: ``kind`` (crash, failed, block_dim,
    data_overflow), what happened, and where (file:line, "" where nothing names it)."""

    kind: str
    message: str
    case: str
    where: str = ""

    def __str__(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.kind}: {self.message} (case: {self.case}){at}"


@dataclass(frozen=True)
class TilingRun:
    """What the TilingFunc set for one case. ``status``: its return (0: GRAPH_SUCCESS;
    None: it crashed or never ran, see ``findings``); ``data`` the tiling data's bytes
    (``GetDataSize`` of them, up to the capacity), what the kernel receives as ``tiling``;
    ``layout`` the op's ``BEGIN_TILING_DATA_DEF`` class for this key (None: a plain struct
    or none), ``layouts`` it and every other class the op registers per key (the kernel's
    other branches name them);
    ``template_args`` the values ``GET_TPL_TILING_KEY`` packed into the key."""

    op_type: str
    case: Case
    status: int | None
    block_dim: int = 0
    tiling_key: int = 0
    workspace_sizes: tuple[int, ...] = ()
    data: bytes = b""
    data_size: int = 0
    data_capacity: int = 0
    layout: TilingLayout | None = None
    layouts: tuple[TilingLayout, ...] = ()
    schedule_mode: int = 0
    atomic: bool = False
    template_args: tuple[tuple[str, int], ...] = ()
    log: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        """The tiling ran and nothing about it is a defect: the kernel may run with it."""
        return self.status == 0 and not self.findings

    @property
    def workspace(self) -> int:
        """The bytes of workspace the launch gets: every size the tiling set, summed."""
        return sum(self.workspace_sizes)


@dataclass
class _Reply:
    """The reply's words as they come, before they are judged."""

    parse: int | None = None
    status: int | None = None
    values: dict = field(default_factory=dict)
    layouts: list = field(default_factory=list)
    log: list = field(default_factory=list)


class TilingLibrary(Library):
    """A compiled tiling library (:func:`~opsdk.cann.tiling.build`), run in a worker
    process (built with a sanitizer, it cannot be loaded into this one)."""

    ENTRY = "opsdk_tiling"

    def __init__(self, path: Path, root: Path | None = None):
        super().__init__(path, root)

    @property
    def ENVIRON(self) -> dict[str, str]:  # noqa: N802 (Library's name)
        return environ()

    def run(self, source: TilingSource, case: Case) -> TilingRun:
        """``source``'s TilingParse and TilingFunc for ``case``, judged. Raises
        :class:`~opsdk.cann.infer.Unlinked` when the library does not load (a function its
        sources call is defined in another file of the project)."""
        chip = resources(case.chip)
        aic, aiv = case.core_limit or (chip.aic, chip.aiv)
        words = [
            *(f"{g.dtype} {len(g.shape)} {' '.join(map(str, g.shape))}" for g in case.outputs),
            chip.arch,
            str(min(aiv, chip.aiv)),
            str(min(aic, chip.aic)),
            *map(str, (chip.ub, chip.l1, chip.l0a, chip.l0b, chip.l0c, chip.l2)),
            str(chip.lib_workspace),
            str(CAPACITY),
            str(int(case.deterministic)),
        ]
        node = _request(
            source.op_type,
            "node",
            soc_version(case.chip),
            [list(i) for i in case.inputs],
            list(case.attrs),
            case.output_counts or len(case.outputs),
        )
        try:
            status, text = self._ask(source.op_type, f"{node} {' '.join(words)}")
        except Unlinked:  # not the tiling's defect: a source of its project not built with it
            raise
        except Crashed as crash:
            function = source.parse if crash.function == "TilingParse" else source.function
            message, where = _crash(crash)
            where = _at(where, self.root) if where else _where(function)
            finding = Finding("crash", message, str(case), where)
            return TilingRun(source.op_type, case, None, findings=(finding,))
        if status == 1:
            raise KeyError(f"{self.path} registers no tiling for {source.op_type}")
        reply = _read(text, self.root)
        run = _run(source.op_type, case, reply)
        limit = min(aiv, chip.aiv)
        return replace(run, findings=_judged(run, reply, source, limit, self.root))


def workspace_size(runs) -> int:
    """The workspace an op needs for all ``runs`` (its cases): the largest any asks, what
    npugraph_ex's update table sizes once for every value of the updated arguments."""
    return max((r.workspace for r in runs if r.status == 0), default=0)


def _read(text: str, root: Path | None) -> _Reply:
    reply = _Reply()
    stack: list[tuple[str, int, list]] = []
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "parse":
            reply.parse = int(rest)
        elif word == "tiling":
            reply.status = None if rest == "none" else int(rest)
        elif word == "struct":
            name, size_text = rest.split()
            stack.append((name, int(size_text), []))
        elif word == "field":
            name, ctype, count, offset, _size = rest.split()
            stack[-1][2].append(Field(name, ctype, int(count), int(offset)))
        elif word == "end":
            name, size, fields = stack.pop()
            layout = TilingLayout(name, tuple(fields), size)
            if stack:  # a struct field's layout: it follows that field's line
                stack[-1][2][-1] = replace(stack[-1][2][-1], nested=layout)
            else:
                reply.layouts.append(layout)
        elif word in ("log", "error"):
            reply.log.append(logged(word, rest, root))
        else:
            reply.values[word] = rest
    return reply


def _run(op_type: str, case: Case, reply: _Reply) -> TilingRun:
    v = reply.values
    status = reply.status if reply.parse in (None, 0) else reply.parse
    if "blockdim" not in v:
        return TilingRun(op_type, case, status, log=tuple(reply.log))
    data = v["data"]
    return TilingRun(
        op_type,
        case,
        status,
        block_dim=int(v["blockdim"]),
        tiling_key=int(v["key"]),
        workspace_sizes=tuple(int(s) for s in v.get("workspaces", "").split()),
        data=b"" if data == "-" else bytes.fromhex(data),
        data_size=int(v["datasize"]),
        data_capacity=int(v["capacity"]),
        layout=reply.layouts[0] if reply.layouts else None,
        layouts=tuple(reply.layouts),
        schedule_mode=int(v["schedule"]),
        atomic=v["atomic"] == "1",
        template_args=tuple(
            (name, int(value))
            for name, _, value in (a.partition("=") for a in v.get("template", "").split())
        ),
        log=tuple(reply.log),
    )


def _judged(run: TilingRun, reply: _Reply, source: TilingSource, cores: int, root) -> tuple:
    """The findings of a run: a failure return, a block dim the chip cannot launch (0, or
    above the cores the tiling was told of), tiling data longer than its capacity or than
    the class it declares, bytes written past the capacity."""
    case, v = str(run.case), reply.values
    function = source.parse if reply.parse not in (None, 0) else source.function
    if run.status is None:
        return ()
    if run.status != 0:
        errors = [line[2:] for line in run.log if line.startswith("E ")]
        where = errors[-1].split(" ", 1)[0] if errors else _where(function)
        said = f": {errors[-1].split(' ', 1)[1]}" if errors else ""
        name = function.name if function else source.op_type
        return (Finding("failed", f"{name} returned {run.status}{said}", case, where),)
    found = []
    block_at = _at(v.get("blockdimat", "-"), root)
    if run.block_dim == 0:
        found.append(Finding("block_dim", "block dim 0 (never set, or set to 0)", case, block_at))
    elif run.block_dim > cores:
        found.append(
            Finding(
                "block_dim",
                f"block dim {run.block_dim} above the {cores} vector cores the tiling was given",
                case,
                block_at,
            )
        )
    size_at = _at(v.get("datasizeat", "-"), root)
    if run.data_size > run.data_capacity:
        message = f"tiling data of {run.data_size} bytes, capacity {run.data_capacity}"
        found.append(Finding("data_overflow", message, case, size_at))
    elif run.layout is not None and run.data_size > run.layout.size:
        message = (
            f"tiling data of {run.data_size} bytes, longer than {run.layout.struct} "
            f"({run.layout.size} bytes) it declares"
        )
        found.append(Finding("data_overflow", message, case, size_at))
    overrun = int(v.get("overrun", "0"))
    if overrun:
        message = f"wrote {overrun} bytes past the tiling data's capacity {run.data_capacity}"
        found.append(Finding("data_overflow", message, case, _where(source.function)))
    return tuple(found)


def _crash(crash: Crashed) -> tuple[str, str]:
    """What a crash was and where (file:line below the project, "" unknown): the
    sanitizer's report when it made one (its first frame in the project's sources: the
    library names them relative to it; opsdk's and the system's are absolute), else how
    the process ended."""
    said = "\n".join(crash.said)
    error = _SANITIZER.search(said)
    if error is None:
        return str(crash), ""
    access = next((m for m in map(_ACCESS.match, crash.said) if m), None)
    what = f"{access[1].lower()} of {access[2]} bytes: " if access else ""
    frames = [m for m in _FRAME.finditer(said) if not m[2].startswith(("/", ".."))]
    function = f" in {frames[0][1]}" if frames else ""
    message = f"the {crash.function or 'library'} crashed ({what}{error[1]}{function})"
    return message, frames[0][2] if frames else ""


def _where(function: Function | None) -> str:
    return f"{function.file}:{function.line}" if function and function.line else ""


def _at(where: str, root: Path | None) -> str:
    """A file:line the library recorded (relative to the project it was built for)."""
    if where == "-":
        return ""
    return where if root is None or where.startswith("/") else f"{root}/{where}"
