"""How much of the public 910B vector kernels opsdk's AscendC stand-in compiles (issue 38).

Over AscendC op repositories (checkouts or bare mirrors, walked by ``_corpus.py``;
nothing of theirs is kept): every kernel entry (an ``op_kernel/*.cpp`` with a
``__global__ __aicore__`` function) of an op built for ascend910b (its ``op_host/*_def.cpp``
configures it), outside ``experimental/`` unless ``--experimental``, not an arch35 one
(``arch35/``, ``*_apt.cpp``) and vector-only (no Matmul/cube, no communication in its
include closure). Each is compiled ``-fsyntax-only`` against the stand-in, with every
parameter's dtype float32 (under the kernel's name and its definition's, as the
``ascendc`` column names them) and, for a ``BEGIN_TILING_DATA_DEF`` op, its tiling
structs read from the host header's text (an approximation of the layout twin-host reads
from the compiled host library): the op's own and those it registers per tiling key
(``OpType_<key>``), as CANN's opbuild generates them all for the kernel. Prints the
figure that compiles, the missing identifiers and headers by how many entries miss them,
and the other first errors by kind.

    python bench/kernel_sweep.py /work/.mirror/hicann+ops-nn /work/.mirror/hicann+ops-math \\
        /work/.mirror/hicann+ops-transformer [--limit N] [--match REGEX] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import files, sources  # noqa: E402

from opsdk.cann import kernel  # noqa: E402
from opsdk.cann.kernel import sources as kernel_sources  # noqa: E402
from opsdk.cann.kernel.build import FLAGS, INCLUDE, tiling_header, translation_unit  # noqa: E402

GLOBS = ("**/op_kernel/**", "**/op_host/**", "**/*.h", "**/*.hpp")
_NOT_VECTOR = re.compile(
    r"matmul|Mmad|\bLoadData\b|Fixpipe|hccl|Hccl|TPosition::(?:A1|A2|B1|B2|CO1)"
)
_TILING_DEF = re.compile(r"BEGIN_TILING_DATA_DEF\s*\(\s*(\w+)\s*\)(.*?)END_TILING_DATA_DEF", re.S)
_TILING_FIELD = re.compile(
    r"TILING_DATA_FIELD_DEF(?P<kind>_ARR|_STRUCT)?\s*\(\s*(?P<a>[\w:]+)\s*,\s*(?P<b>\w+)\s*(?:,\s*(?P<c>\w+))?\s*\)"
)
_REGISTER = re.compile(r"REGISTER_TILING_DATA_CLASS\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_DEF_NAME = re.compile(r"\b(?:Input|Output)\s*\(\s*\"(\w+)\"")
_MISSING = (
    re.compile(r"‘(?:AscendC::)?(\w+)’ was not declared in this scope"),
    re.compile(r"‘(\w+)’ is not a member of ‘AscendC’"),
    re.compile(r"‘(\w+)’ does not name a type"),
    re.compile(r"there are no arguments to ‘(\w+)’"),
    re.compile(r"‘(\w+)’ has not been declared"),
)
_HEADER = re.compile(r"fatal error: ([^:]+): No such file or directory")
_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
          "float": 4, "int64_t": 8, "uint64_t": 8, "double": 8}  # fmt: skip


@dataclass
class Outcome:
    entry: str
    ok: bool
    missing: list[str]
    header: str | None
    first_error: str
    seconds: float


def entries(root: Path, experimental: bool) -> list[Path]:
    """The 910B vector-only kernel entries under ``root``."""
    found = []
    for source in files(root, "**/op_kernel/*.cpp"):
        relative = source.relative_to(root).as_posix()
        if relative.startswith("experimental/") and not experimental:
            continue
        if source.name.endswith("_apt.cpp") or "arch35" in relative:
            continue
        op = source.parent.parent
        defs = list(op.glob("op_host/*_def.cpp"))
        if not any('"ascend910b"' in d.read_text(errors="replace") for d in defs):
            continue
        text = source.read_text(errors="replace")
        if not re.search(r"__global__\s+__aicore__", text):
            continue
        closure = text + "".join(
            p.read_text(errors="replace")
            for p in source.parent.rglob("*.h")
            if "arch35" not in p.parts
        )
        if not _NOT_VECTOR.search(closure):
            found.append(source)
    return found


_CONSTANT = re.compile(
    r"(?:constexpr|const|#define)\s+(?:\w+\s+)*?(\w+)(?:\s*=\s*|\s+)(\d+)[uUlL]*\b"
)


def tiling_index(root: Path) -> tuple[dict[str, str], dict[str, int], dict[str, str]]:
    """Every BEGIN_TILING_DATA_DEF struct's body in the repository, by name, the integer
    constants an array field's count may name, and the struct each op type registers."""
    index, constants, registered = {}, {}, collections.defaultdict(list)
    for path in files(root, "**/op_host/**/*.h") + files(root, "**/op_host/**/*.cpp"):
        text = path.read_text(errors="replace")
        for name, body in _TILING_DEF.findall(text):
            index.setdefault(name, body)
        for name, value in _CONSTANT.findall(text):
            constants.setdefault(name, int(value))
        for op, struct in _REGISTER.findall(text):
            if struct not in registered[op]:
                registered[op].append(struct)
    return index, constants, registered


def layout(name: str, index: tuple[dict[str, str], dict[str, int]], seen=()):
    """A layout of struct ``name`` at natural alignment (None: a field's type is unknown)."""
    structs, constants, _ = index
    if name not in structs or name in seen:
        return None
    fields, at, align = [], 0, 1
    for m in _TILING_FIELD.finditer(structs[name]):
        if m["kind"] == "_STRUCT":
            nested = layout(m["a"], index, (*seen, name))
            if nested is None:
                return None
            size, ctype, count, field, field_align = nested.size, "", 1, m["b"], 8
        else:
            ctype = m["a"].removeprefix("std::")
            if ctype not in _SIZES:
                return None
            count = 1
            if m["kind"] == "_ARR":
                count = int(m["b"]) if m["b"].isdigit() else constants.get(m["b"], 0)
                if not count:
                    return None
            field = m["c"] if m["kind"] == "_ARR" else m["b"]
            size, nested, field_align = _SIZES[ctype], None, _SIZES[ctype]
        at = -(-at // field_align) * field_align
        fields.append(kernel_field(field, ctype, count, at, nested))
        at += size * count
        align = max(align, field_align)
    return kernel_layout(name, tuple(fields), max(-(-at // align) * align, align))


@dataclass(frozen=True)
class kernel_field:  # noqa: N801 (the contract's Field, by hand)
    name: str
    ctype: str
    count: int
    offset: int
    nested: object = None


@dataclass(frozen=True)
class kernel_layout:  # noqa: N801 (the contract's TilingLayout, by hand)
    struct: str
    fields: tuple
    size: int


def op_type_of(source: Path) -> str:
    """The op type of a kernel entry: its op folder's name in CamelCase."""
    return "".join(word.capitalize() for word in source.parent.parent.name.split("_"))


def key_layouts(source: Path, index) -> list:
    """The layouts the op registers per tiling key (``OpType_<key>``), each once."""
    prefix = op_type_of(source) + "_"
    names = {s for op, structs in index[2].items() if op.startswith(prefix) for s in structs}
    return [found for name in sorted(names) if (found := layout(name, index)) is not None]


def op_layout(source: Path, index):
    """The tiling layout GET_TILING_DATA reads in ``source``'s op: the struct its op type
    registers anywhere, else the first one its own op_host registers."""
    op_type = op_type_of(source)
    if op_type in index[2]:
        return layout(index[2][op_type][0], index)
    for path in sorted((source.parent.parent / "op_host").rglob("*")):
        if path.suffix in (".h", ".cpp", ".hpp"):
            for op, struct in _REGISTER.findall(path.read_text(errors="replace")):
                if "_" not in op:
                    return layout(struct, index)
    kernel_text = "".join(p.read_text(errors="replace") for p in source.parent.glob("*.*"))
    named = [name for name in index[0] if re.search(rf"\b{name}\b", kernel_text)]
    return layout(named[0], index) if named else None  # a struct the kernel names


def include_dirs(source: Path, root: Path) -> list[Path]:
    """The folders a kernel entry's includes resolve in: its folder and each parent up to
    the repository ``root``, with their ``common/inc`` and ``inc``; then other ops' kernel
    folders as the ``ascendc`` column finds them (``../<op>/x.h``)."""
    dirs, folder = [], source.parent
    while folder != root.parent:
        dirs += [folder, *(d for d in (folder / "common" / "inc", folder / "inc") if d.is_dir())]
        folder = folder.parent
    return [*dirs, *kernel_sources.include_dirs(kernel.entry_of(source))]


def missing_in(stderr: str) -> list[str]:
    """The identifiers a compiler's output says are undeclared, sorted."""
    return sorted({m for pattern in _MISSING for m in pattern.findall(stderr)})


def check(source: Path, root: Path, index, toolkit: Path, work: Path) -> Outcome:
    start = time.perf_counter()
    entry = kernel.entry_of(source)
    definitions = source.parent.parent.glob("op_host/*_def.cpp")
    defs = "".join(p.read_text(errors="replace") for p in definitions)
    dtypes = {p: "float32" for p in (*entry.params[:-2], *_DEF_NAME.findall(defs))}
    primary = op_layout(source, index)
    unit = translation_unit(entry, dtypes, (0,) * len(entry.template), primary)
    structs = []  # the structs alone, each once: GET_TILING_DATA reads the op's own
    for one in key_layouts(source, index):
        for block in tiling_header(one).split("#pragma pack(push, 1)\n")[1:]:
            name = re.match(r"struct (\w+)", block)[1]
            if f"struct {name} {{" not in unit + "".join(structs):
                struct = re.split(r"#(?:undef|define) GET_TILING", block)[0]
                structs.append("#pragma pack(push, 1)\n" + struct)
    include = f'#include "{entry.source}"'
    unit = unit.replace(include, "".join(structs) + include)
    path = work / f"{abs(hash(str(source)))}.cpp"
    path.write_text(unit)
    command = ["g++", *FLAGS, "-fsyntax-only", f"-I{toolkit}", f"-I{INCLUDE}"]
    command += [f"-I{d}" for d in include_dirs(source, root)] + [str(path)]
    done = subprocess.run(command, capture_output=True, text=True)
    missing = missing_in(done.stderr)
    header = _HEADER.search(done.stderr)
    first = next((line for line in done.stderr.splitlines() if "error:" in line), "")
    first = re.sub(r"^.*?error: ", "", first)
    return Outcome(
        source.relative_to(root).as_posix(),
        done.returncode == 0,
        missing,
        header[1] if header else None,
        first,
        time.perf_counter() - start,
    )


def _kind(outcome: Outcome) -> str:
    if outcome.header:
        return "a header the stand-in lacks"
    if outcome.missing:
        return "an identifier the stand-in lacks"
    if "no matching function" in outcome.first_error:
        return "an overload the stand-in lacks"
    if "has no member" in outcome.first_error:
        return "a member the stand-in lacks"
    return "other"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--experimental", action="store_true")
    parser.add_argument("--match", type=re.compile, help="only the entries whose path matches")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--work", type=Path, help="extract here and keep it (reused by the next run)"
    )
    args = parser.parse_args(argv)
    toolkit = kernel.toolkit()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.paths:
            kept = args.work / path.name if args.work else None
            if kept and kept.is_dir():
                name, root = path.name.split("+")[-1], next(kept.iterdir())
            else:
                name, root = sources(path, kept or Path(tmp) / "src", GLOBS)
            index = tiling_index(root)
            found = entries(root, args.experimental)
            if args.match:
                found = [f for f in found if args.match.search(f.relative_to(root).as_posix())]
            if args.limit:
                found = found[: args.limit]
            work = Path(tmp) / f"units-{name}"
            work.mkdir()
            with ThreadPoolExecutor(2) as pool:
                one = functools.partial(check, root=root, index=index, toolkit=toolkit, work=work)
                done = list(pool.map(one, found))
            for outcome in done:
                outcome.entry = f"{name}/{outcome.entry}"
            print(f"{name}: {sum(o.ok for o in done)} of {len(done)} entries compile")
            outcomes += done
    total, ok = len(outcomes), sum(o.ok for o in outcomes)
    print(
        f"\nall: {ok} of {total} 910B vector entries compile (-fsyntax-only): "
        f"{ok / max(total, 1):.0%}"
    )
    print(
        f"seconds per entry: {sum(o.seconds for o in outcomes) / max(total, 1):.2f} (2 at a time)"
    )
    kinds = collections.Counter(_kind(o) for o in outcomes if not o.ok)
    print("\nthe rest, by first reason:")
    for kind, n in kinds.most_common():
        print(f"  {n:4d}  {kind}")
    names = collections.Counter(m for o in outcomes if not o.ok for m in o.missing)
    alone = collections.Counter(
        o.missing[0] for o in outcomes if len(o.missing) == 1 and not o.header
    )
    print("\nmissing identifiers (entries missing it; entries missing only it):")
    for name, n in names.most_common(40):
        print(f"  {n:4d} {alone.get(name, 0):4d}  {name}")
    headers = collections.Counter(o.header for o in outcomes if o.header)
    print("\nmissing headers:")
    for name, n in headers.most_common(20):
        print(f"  {n:4d}  {name}")
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
