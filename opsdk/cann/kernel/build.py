"""Compile an op's AscendC kernel (``op_kernel/*.cpp``) for the CPU into a shared library,
once per set of sources.

The source compiles with g++ against opsdk's own stand-in of AscendC's kernel API
(``include/``, written from how kernels use it: no CANN header is copied), for one
chip build as CANN's does one per dtype combination: each parameter's dtype becomes the
``DTYPE_<NAME>`` / ``ORIG_DTYPE_<NAME>`` macros the kernel is written against. A template
entry (tiling keys declared with ``ASCENDC_TPL_ARGS_DECL``) is instantiated for the key a
tiling chose; an op whose tiling data is a ``BEGIN_TILING_DATA_DEF`` struct gets the
kernel-side struct and ``GET_TILING_DATA`` generated from its layout, as CANN's opbuild
generates them. The library is cached under opsdk's cache directory, keyed on everything
that shapes it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from opsdk._runtime import locator, types
from opsdk.cann.infer.build import _compile, _included
from opsdk.errors import SpecError

__all__ = [
    "CTYPES",
    "INCLUDE",
    "Built",
    "Entry",
    "absent_dtypes",
    "build",
    "entry_of",
    "template_args",
    "tiling_header",
    "toolkit",
    "translation_unit",
]

INCLUDE = Path(__file__).resolve().parent / "include"
RECIPE_VERSION = 2  # bump when the way libraries are built changes
# -Og: compiles as fast as -O0 and runs a kernel's cases up to 1.7x faster; -O1 would
# double the compile a first run waits for, for little more (bench/kernel_cost.py).
FLAGS = ("-std=c++17", "-Og", "-fPIC", "-w", "-pthread", "-ffp-contract=off")

# The C++ element type of each torch dtype name in a kernel (AscendC's spellings).
CTYPES = {
    "float32": "float", "float16": "half", "bfloat16": "bfloat16_t", "int8": "int8_t",
    "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t",
    "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t", "bool": "bool",
}  # fmt: skip

_ENTRY = re.compile(
    r"(?:template\s*<(?P<template>[^>]*)>\s*)?(?:extern\s+\"C\"\s+)?__global__\s+__aicore__\s+void\s+"
    r"(?P<name>\w+)\s*\((?P<params>[^)]*)\)",
)
_TPL_DECL = re.compile(r"ASCENDC_TPL_ARGS_DECL\s*\(\s*\w+\s*,(?P<body>.*?)\)\s*;", re.S)
_TPL_PARAM = re.compile(
    r"ASCENDC_TPL_(?P<kind>UINT|BOOL|DTYPE|FORMAT)_DECL\s*\(\s*(?P<name>\w+)\s*(?:,\s*(?P<bits>\d+))?"
)
_TPL_BITS = {"BOOL": 1, "DTYPE": 8, "FORMAT": 8}


@dataclass(frozen=True)
class Entry:
    """A kernel's entry: its source, function name, GM parameters in order (the last two
    are workspace and tiling) and, for a template entry, its template parameters."""

    source: Path
    name: str
    params: tuple[str, ...]
    template: tuple[str, ...] = ()


@dataclass(frozen=True)
class Built:
    library: Path
    entry: Entry
    seconds: float  # compile time; 0.0 when the library came from the cache


def entry_of(source: Path) -> Entry:
    """The ``__global__ __aicore__`` entry of ``source`` (a kernel's ``.cpp``)."""
    text = Path(source).read_text(errors="replace")
    match = _ENTRY.search(_for_this_chip(_without_comments(text)))
    if match is None:
        raise SpecError(
            f"{source}: no `__global__ __aicore__ void` entry: give an op_kernel source"
        )
    params = tuple(p.split()[-1].lstrip("*&") for p in match["params"].split(",") if p.strip())
    template = tuple(p.split()[-1] for p in (match["template"] or "").split(",") if p.strip())
    return Entry(Path(source).resolve(), match["name"], params, template)


def template_args(entry: Entry, tiling_key: int, headers: list[Path]) -> tuple[int, ...]:
    """The template arguments a tiling key stands for: ``ASCENDC_TPL_ARGS_DECL``'s
    parameters packed from the lowest bit in declaration order, each its declared width
    (a bool 1 bit, a dtype or format 8)."""
    for header in [entry.source, *headers]:
        found = _TPL_DECL.search(header.read_text(errors="replace"))
        if found is None:
            continue
        args, shift = [], 0
        for param in _TPL_PARAM.finditer(found["body"]):
            bits = int(param["bits"]) if param["kind"] == "UINT" else _TPL_BITS[param["kind"]]
            args.append(tiling_key >> shift & ((1 << bits) - 1))
            shift += bits
        if len(args) == len(entry.template):
            return tuple(args)
    raise SpecError(
        f"{entry.source}: its entry is a template of {len(entry.template)} parameters and no "
        "ASCENDC_TPL_ARGS_DECL in its headers declares as many: keep its key header beside it"
    )


def build(
    entry: Entry,
    dtypes: dict[str, str] | None = None,
    *,
    tiling_key: int = 0,
    layout=None,
    layouts: tuple = (),
    include_dirs: tuple[Path, ...] = (),
    root: Path | None = None,
) -> Built:
    """The library of ``entry`` for ``dtypes`` (parameter name -> torch dtype name: its
    ``DTYPE_<NAME>`` macros), built now unless cached. ``tiling_key`` picks a template
    entry's instance; ``layout``: a ``BEGIN_TILING_DATA_DEF`` op's tiling data layout
    (``struct``, ``fields``, ``size``: the contract's TilingLayout), ``layouts`` the other
    classes it registers per tiling key (declared too); ``include_dirs``:
    folders after the source's own (a repository's shared headers); ``root``: the
    project folder findings name files relative to. Raises ``CompileFailure``."""
    root = Path(root).resolve() if root else entry.source.parent
    dirs = (*_source_dirs(entry, root), *map(Path, include_dirs))
    text = entry.source.read_text(errors="replace")
    headers = sorted(_included([("", text)], dirs, (INCLUDE,)) | {entry.source})
    args = template_args(entry, tiling_key, headers) if entry.template else ()
    unit = translation_unit(entry, dtypes or {}, args, layout, layouts)
    key = _key(unit.replace(f"{root}/", ""), headers)  # a copy of the project shares it
    directory = locator.cache_root() / "kernel" / f"{entry.name}_{key}"
    library = directory / "kernel.so"
    if library.is_file():
        return Built(library, entry, 0.0)
    start = time.perf_counter()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "unit.cpp").write_text(unit)
    partial = directory / f"kernel.{os.getpid()}.so"
    flags = [*FLAGS, f"-I{toolkit()}", f"-I{INCLUDE}", *(f"-I{d}" for d in dirs)]
    flags.append(f"-fmacro-prefix-map={root}/=")
    _compile([*flags, "-shared", "unit.cpp", "-o", str(partial)], directory)
    partial.replace(library)  # atomic: a concurrent build never sees half a library
    return Built(library, entry, round(time.perf_counter() - start, 2))


def toolkit() -> Path:
    """``kernel_operator.h`` precompiled, once per version of opsdk's headers and flags
    (the unit includes it first: it halves a kernel's compile time)."""
    folder = locator.cache_root() / "kernel" / f"toolkit_{_digest().hexdigest()[:16]}"
    if (folder / "kernel_operator.h.gch").is_file():
        return folder
    partial = folder.with_name(f"{folder.name}.{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    shutil.copyfile(INCLUDE / "kernel_operator.h", partial / "kernel_operator.h")
    _compile(
        [
            *FLAGS,
            f"-I{INCLUDE}",
            "-x",
            "c++-header",
            "kernel_operator.h",
            "-o",
            "kernel_operator.h.gch",
        ],
        partial,
    )
    try:
        partial.rename(folder)  # atomic; a concurrent build may have won: keep its copy
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def _source_dirs(entry: Entry, root: Path) -> list[Path]:
    """The source's folder and its parents up to ``root`` (where a kernel's relative
    includes resolve)."""
    folder, dirs = entry.source.parent, []
    while True:
        dirs.append(folder)
        if folder == root or folder == folder.parent or not folder.is_relative_to(root):
            return dirs
        folder = folder.parent


def translation_unit(
    entry: Entry, dtypes: dict[str, str], args: tuple[int, ...], layout, layouts: tuple = ()
) -> str:
    """The translation unit: the dtype macros, the stand-in, the generated tiling struct,
    the kernel's source and the launcher calling its entry."""
    lines = ['#include "kernel_operator.h"']  # first: the precompiled header
    lines += [f"#define {d.ge} {d.value}" for d in types.DTYPES.values()]
    for name, dtype in sorted(dtypes.items()):
        if dtype not in CTYPES:
            raise SpecError(
                f"{entry.name}: {name} has dtype {dtype!r}: give one of {', '.join(CTYPES)}"
            )
        lines.append(f"#define DTYPE_{name.upper()} {CTYPES[dtype]}")
        lines.append(f"#define ORIG_DTYPE_{name.upper()} {types.known_dtype(dtype).ge}")
    if layout is not None:
        lines.append(tiling_header(layout, layouts))
    lines.append(f'#include "{entry.source}"')
    template = f"<{', '.join(map(str, args))}>" if args else ""
    call = ", ".join(f"a[{i}]" for i in range(len(entry.params)))
    lines.append(f"#define OPSDK_CALL(a) {entry.name}{template}({call})")
    lines.append('#include "opsdk_kernel_entry.h"')
    return "\n".join(lines) + "\n"


def absent_dtypes(
    declared: Mapping[str, Sequence[str]], given: Mapping[str, str | None]
) -> dict[str, types.DType]:
    """Each absent tensor's dtype (a None in ``given``) in the definition's row the given
    tensors are of (the first row when none matches): CANN builds a kernel per row,
    ``DTYPE_<NAME>`` of every input defined, so a kernel may name the dtype of an optional
    input a case leaves out. ``declared``: tensor name -> GE enumerators, the i-th of each
    one row, a one-entry list every row's (an IrDef's ``dtypes``); ``given``: each tensor's
    dtype however spelt. An absent tensor the definition does not declare has none."""

    def row_of(name: str, row: int) -> types.DType | None:
        listed = declared.get(name)
        return types.DTYPES[listed[row % len(listed)]] if listed else None

    width = max((len(d) for d in declared.values()), default=1)
    present = {n: types.dtype(d) for n, d in given.items() if d is not None}
    rows = [r for r in range(width) if all(row_of(n, r) in (None, d) for n, d in present.items())]
    absent = {n: row_of(n, rows[0] if rows else 0) for n, d in given.items() if d is None}
    return {n: d for n, d in absent.items() if d is not None}


def tiling_header(layout, layouts: tuple = ()) -> str:
    """The kernel-side tiling struct of a ``BEGIN_TILING_DATA_DEF`` layout (fields at
    their offsets, nested structs first) and ``GET_TILING_DATA`` reading it; the structs
    of ``layouts`` (the op's other classes) declared too."""
    structs: dict[str, str] = {}
    for one in (*layouts, layout):
        _struct(one, structs)
    name = layout.struct
    return "\n".join(
        [
            *structs.values(),
            "#undef GET_TILING_DATA",
            f"#define GET_TILING_DATA(var, tiling) {name} var; "
            f"opsdk_rt::read_tiling(&var, tiling, sizeof({name}))",
        ]
    )


def _struct(layout, structs: dict[str, str]) -> None:
    body, at = [], 0
    for i, field in enumerate(sorted(layout.fields, key=lambda f: f.offset)):
        if field.nested is not None:
            _struct(field.nested, structs)
        if field.offset > at:
            body.append(f"  uint8_t opsdk_pad{i}[{field.offset - at}];")
        ctype = field.nested.struct if field.nested is not None else field.ctype
        size = field.nested.size if field.nested is not None else _size(field.ctype)
        count = max(field.count, 1)
        body.append(f"  {ctype} {field.name}" + (f"[{field.count}];" if field.count > 1 else ";"))
        at = field.offset + size * count
    if layout.size > at:
        body.append(f"  uint8_t opsdk_tail[{layout.size - at}];")
    structs[layout.struct] = (
        f"#pragma pack(push, 1)\nstruct {layout.struct} {{\n" + "\n".join(body) + "\n};\n"
        f"#pragma pack(pop)\nstatic_assert(sizeof({layout.struct}) == {layout.size});"
    )


def _size(ctype: str) -> int:
    sizes = {"int8_t": 1, "uint8_t": 1, "char": 1, "bool": 1, "int16_t": 2, "uint16_t": 2,
             "half": 2, "int32_t": 4, "uint32_t": 4, "float": 4, "int64_t": 8, "uint64_t": 8,
             "double": 8}  # fmt: skip
    if ctype not in sizes:
        raise SpecError(f"tiling field type {ctype!r} is not a TILING_DATA_FIELD_DEF type")
    return sizes[ctype]


def _key(unit: str, headers: list[Path]) -> str:
    """A digest of what shapes the library: the unit, the kernel's sources and headers by
    content, and :func:`_digest`'s."""
    digest = _digest()
    digest.update(unit.encode())
    for path in headers:
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _digest():
    """A digest of opsdk's stand-in headers, the compiler and its flags."""
    digest = hashlib.sha256(repr((RECIPE_VERSION, FLAGS, os.environ.get("CXX", "g++"))).encode())
    for path in sorted(p for p in INCLUDE.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(INCLUDE)).encode() + b"\0" + path.read_bytes())
    return digest


def _without_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


# The chip the stand-in builds for (kernel_operator.h's), as the conditionals test it.
_CHIP_MACROS = {"__CCE_AICORE__": 220, "__NPU_ARCH__": 2201, "__DAV_C220_VEC__": 1}
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def _for_this_chip(text: str) -> str:
    """``text`` without the branches of ``#if``s on the chip macros alone that a 910B
    vector build leaves out (an arch35 entry beside the 910B one in one file); a branch
    whose condition names anything else is kept."""
    kept, stack = [], []  # per open #if: (this branch active, a branch taken, decidable)
    for line in text.splitlines():
        found = _DIRECTIVE.match(line)
        kind, rest = (found[1], found[2]) if found else ("", "")
        if kind in ("if", "ifdef", "ifndef"):
            if kind != "if":
                rest = ("" if kind == "ifdef" else "!") + f"defined({rest.strip()})"
            value = _chip_condition(rest)
            stack.append((value is not False, bool(value), value is not None))
        elif kind == "elif" and stack:
            _, taken, decidable = stack[-1]
            value = _chip_condition(rest)
            if decidable and value is not None:
                stack[-1] = (not taken and value, taken or value, True)
            else:
                stack[-1] = (True, taken, False)
        elif kind == "else" and stack:
            _, taken, decidable = stack[-1]
            stack[-1] = (not (decidable and taken), taken, decidable)
        elif kind == "endif" and stack:
            stack.pop()
        if all(active for active, _, _ in stack):
            kept.append(line)
    return "\n".join(kept)


def _chip_condition(condition: str) -> bool | None:
    """A preprocessor condition's value on the stand-in's chip; None when it names
    anything but the chip macros."""
    expression = re.sub(
        r"defined\s*\(?\s*(\w+)\s*\)?",
        lambda m: "1" if m[1] in _CHIP_MACROS else m[0],
        condition,
    )
    expression = re.sub(r"\w+", lambda m: str(_CHIP_MACROS.get(m[0], m[0])), expression)
    expression = expression.replace("&&", " and ").replace("||", " or ")
    expression = re.sub(r"!(?!=)", " not ", expression)
    if re.search(r"[A-Za-z_]", expression.replace("and", "").replace("or", "").replace("not", "")):
        return None
    try:
        return bool(eval(expression, {"__builtins__": {}}))  # digits and operators only
    except SyntaxError:
        return None
