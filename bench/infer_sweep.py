"""How many production infershape files opsdk compiles and runs (issue 29).

Over every ``op_host/*infershape*.cpp`` of the given repositories (CANN's ``hicann/ops-nn``
and ``hicann/ops-transformer``, see :mod:`_corpus`): find the ops the file registers
(:func:`opsdk.cann.infer.find_all`), compile the file against opsdk's stand-in headers
(:func:`opsdk.cann.infer.build`, a fresh cache: first-run cost) and call each op's
InferShape, in a worker process (a crash is counted, not fatal), on cases made from the
op's own definition: its OpDef (beside the file, else anywhere in the repository), else
its ``REG_OP`` (``op_graph/*_proto.h``). First the definition's cases (each dtype row,
each input's rank from its format, else ranks 1 to 5; attrs at their defaults), then,
if the C++ refuses them all, variations of them (optional inputs given, ranks, sizes,
attr values, strings the C++ compares with, host data for integer inputs), seeded, until
one is accepted. A file counts when it compiles and one of its ops returns GRAPH_SUCCESS
on one case. Reports the figure, the reasons for the rest by kind (with a file each),
how many needed a searched case, and the compile time per file.

    python bench/infer_sweep.py PATH... [--limit N] [--tries N] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import _corpus

from opsdk import cann
from opsdk._runtime import types
from opsdk.cann import infer
from opsdk.cann.files import opdef_files
from opsdk.cann.sizes import FORMAT_RANKS
from opsdk.errors import OpsdkError

# What a bare mirror's files are extracted for: the sources, their headers, the REG_OPs.
GLOBS = ("**/*.h", "**/*.hpp", "**/op_host/**", "**/op_graph/*_proto.h")
RANKS = (2, 3, 4, 1, 5)  # a tensor's rank where its format leaves it open, in this order
SIZE = 16
MAX_CRASHES = 50  # an op crashing on this many cases is not tried further
# An attr without a default (GE requires it set): a value of its type.
_GUESS = {
    "VT_INT": 1,
    "VT_FLOAT": 1.0,
    "VT_BOOL": False,
    "VT_STRING": "",
    "VT_DATA_TYPE": 1,
    "VT_LIST_INT": (1, 1),
    "VT_LIST_FLOAT": (1.0, 1.0),
    "VT_LIST_BOOL": (False, False),
}
_FORMATS = ("ND", "NCHW", "NHWC", "NCDHW", "NDHWC")  # formats a searched case may give
_INTEGERS = frozenset({"DT_INT32", "DT_INT64"})
_LITERAL = re.compile(r'"([A-Za-z][A-Za-z0-9_]{0,15})"')
_DEFINED = re.compile(r"\b(?:OP_ADD|REG_OP)\s*\(\s*(\w+)\s*\)")


@dataclass
class Row:
    repo: str
    path: str
    outcome: str = "ran"  # ran, or why not
    detail: str = ""
    compile_s: float = 0.0
    ops: list[str] = field(default_factory=list)
    searched: bool = False  # ran only on a case the search found (not the definition's own)


@dataclass(frozen=True)
class Case:
    inputs: list  # per IR input, its instances (infer.Given)
    attrs: list
    outputs: int


def definitions(root: Path) -> dict[str, list[Path]]:
    """Where each op type is defined in the repository: its OpDefs (``op_host``), then
    its ``REG_OP`` prototypes (``op_graph/*_proto.h``)."""
    found: dict[str, list[Path]] = collections.defaultdict(list)
    for path in [*opdef_files(root), *_corpus.files(root, "**/op_graph/*_proto.h")]:
        for op_type in _DEFINED.findall(path.read_text(encoding="utf-8", errors="replace")):
            found[op_type].append(path)
    return found


def definitions_of(op_type: str, file: Path, index: dict) -> list[cann.CannOp]:
    """The definitions of ``op_type``: an OpDef in the file's ``op_host`` folder, then the
    repository's (``index``); an OpDef may leave its attrs to the prototype
    (FlashAttentionScore's declares none), so every one is tried."""
    found = []
    for path in dict.fromkeys([*opdef_files(file.parent), *index.get(op_type, ())]):
        try:
            found += cann.read(path, [op_type])
        except OpsdkError:
            continue
    return found


def cases(op: cann.CannOp, literals: list[str], tries: int, seed: int = 0):
    """The definition's cases, then ``tries`` variations of them (seeded)."""
    ir = op.ir
    width = _width(op)
    for row in range(min(width, 4)):
        for rank in RANKS:
            yield _case(op, row, lambda name, r=rank: r, {}, lambda name: False)
    rng = random.Random(seed)
    for _ in range(tries):
        row = rng.randrange(max(width, 1))
        base = rng.choice(RANKS)
        # half the cases coherent: every input of one rank, every list attr (ksize, strides,
        # pads) as long as it, as pooling ops ask; the others mixed
        coherent = rng.random() < 0.5
        mixed = 0.0 if coherent else 0.4
        ranks = {
            i.name: rng.choice((0, *RANKS)) if rng.random() < mixed else base for i in ir.inputs
        }
        length = base if coherent else rng.choice((base, base, 1, 2, 3, 4, 5, 6))
        attrs = {
            a.name: _varied(
                a, length if rng.random() < 0.8 + mixed / 2 else rng.choice(RANKS), literals, rng
            )
            for a in ir.attrs
            if rng.random() < 0.6
        }
        given = {i.name: rng.random() < 0.5 for i in ir.inputs}
        size = rng.choice((SIZE, 1, 2, 4, 8))
        fmt = rng.choice(_FORMATS) if rng.random() < 0.3 else None
        yield _case(op, row, ranks.get, attrs, given.get, size, rng, fmt)


def _case(
    op, row: int, rank_of, attrs: dict, optional_given, size=SIZE, rng=None, fmt=None
) -> Case:
    """One case: each tensor's ``row``-th dtype (:func:`_width`), each input's rank from
    its format (``fmt``: every input's, else the definition's), else ``rank_of``;
    optional inputs given where ``optional_given`` says so; ``attrs`` over the defaults."""
    ir = op.ir
    inputs = []
    for i in ir.inputs:
        dtypes = op.dtypes.get(i.name) or ("DT_FLOAT16",)
        dtype = dtypes[row % len(dtypes)]
        form = fmt or _format(op.formats.get(i.name, ()), row)
        rank = FORMAT_RANKS.get(form, rank_of(i.name))
        shape = (size,) * rank
        data = None
        if i.value_depend or (rng and dtype in _INTEGERS and rng.random() < 0.3):
            dtype = dtype if dtype in _INTEGERS else "DT_INT64"
            length = rng.choice((1, 2, 3, 4, 5)) if rng else max(rank, 1)
            shape = (length,)
            value = rng.choice((1, 2, SIZE)) if rng else 1
            width = 8 if dtype == "DT_INT64" else 4
            data = b"".join(value.to_bytes(width, "little") for _ in range(length))
        given = infer.Given(types.DTYPES[dtype].value, shape, data, form)
        count = {"required": 1, "optional": int(bool(optional_given(i.name))), "dynamic": 2}
        inputs.append([given] * count[i.kind])
    values = [
        attrs[a.name]
        if a.name in attrs
        else a.default
        if a.default is not None
        else _GUESS.get(a.type)
        for a in ir.attrs
    ]
    dynamic = 2 if any(i.kind == "dynamic" for i in ir.inputs) else 1
    outputs = sum(dynamic if o.kind == "dynamic" else 1 for o in ir.outputs)
    return Case(inputs, values, outputs)


def _format(declared: tuple[str, ...], row: int) -> str:
    fmt = declared[row % len(declared)].removeprefix("FORMAT_") if declared else "ND"
    return fmt if fmt in infer.FORMATS else "ND"


def _varied(attr, length: int, literals: list[str], rng):
    """Another value of ``attr``'s type: small numbers, lists ``length`` long, strings
    the C++ compares with."""
    kind = attr.type
    if kind == "VT_INT":
        return rng.choice((0, 1, 2, 3, -1, 4, SIZE))
    if kind == "VT_FLOAT":
        return rng.choice((1.0, 0.5, 0.0, 2.0))
    if kind == "VT_BOOL":
        return rng.random() < 0.5
    if kind == "VT_STRING":
        return rng.choice(literals or [""])
    if kind in ("VT_LIST_INT", "VT_LIST_FLOAT", "VT_LIST_BOOL"):
        value = {"VT_LIST_INT": rng.choice((1, 2, 0)), "VT_LIST_FLOAT": 1.0}.get(kind, False)
        return (value,) * length
    return _GUESS.get(kind)


def run_op(library: infer.Library, op_type: str, op, literals, tries) -> tuple[str, str, bool]:
    """(outcome, detail, searched): whether a case of ``op`` is accepted, else why not."""
    refusal, crash, crashes = "", "", 0
    for n, case in enumerate(cases(op, literals, tries)):
        try:
            answer = library.infer(op_type, case.inputs, case.attrs, case.outputs)
        except infer.Crashed as err:
            if "undefined symbol" in str(err):  # the library does not load: no case will
                symbol = str(err).rpartition("undefined symbol: ")[2].rstrip(")")
                return "needs another source of the project", symbol, False
            crash, crashes = str(err), crashes + 1
            if crashes == MAX_CRASHES:
                break
            continue
        if answer.shape_status == 0:
            return "ran", "", n >= _own_cases(op)
        refusal = next((line for line in answer.log if line.startswith("E ")), "no log")
    if crash and not refusal:
        return "crashed", crash, False
    return "refused every case", refusal, False


def _own_cases(op) -> int:
    return min(_width(op), 4) * len(RANKS)


def _width(op) -> int:
    """How many dtype rows a case picks from: the i-th entry of every tensor's list (an
    OpDef's aligned rows; a REG_OP's per-tensor sets, tensors of one type symbol alike,
    every combination being too many to list)."""
    return max((len(v) for v in op.dtypes.values()), default=1)


def sweep_file(repo: str, root: Path, file: Path, index: dict, tries: int = 2000) -> Row:
    row = Row(repo, str(file.relative_to(root)))
    found = [i for i in infer.find_all(file).values() if i.infer_shape is not None]
    if not found:
        row.outcome, row.detail = "no IMPL_OP_INFERSHAPE(...).InferShape", ""
        return row
    start = time.perf_counter()
    try:
        built = infer.build(found[0], root)
    except infer.CompileFailure as err:
        row.compile_s = time.perf_counter() - start
        row.outcome, row.detail = "does not compile", str(err).replace(str(root) + "/", "")
        return row
    row.compile_s = time.perf_counter() - start
    text = file.read_text(encoding="utf-8", errors="replace")
    literals = sorted(set(_LITERAL.findall(text)))
    library = infer.Library(built.library)
    outcomes = []
    try:
        for inference in found:
            ops = definitions_of(inference.op_type, file, index)
            if not ops:
                outcomes.append(("no definition in the repository", inference.op_type, False))
            for op in ops:
                outcomes.append(run_op(library, inference.op_type, op, literals, tries))
                if outcomes[-1][0] == "ran":
                    break
            row.ops.append(f"{inference.op_type}: {outcomes[-1][0]}")
    finally:
        library.close()
    ran = [o for o in outcomes if o[0] == "ran"]
    row.outcome, row.detail, row.searched = ran[0] if ran else outcomes[0]
    row.searched = bool(ran) and all(o[2] for o in ran)
    return row


def kind(row: Row) -> str:
    """What groups failures of one kind: the compiler's complaint without names."""
    if row.outcome != "does not compile":
        return row.outcome
    text = row.detail.partition(": ")[2]
    if "No such file" in text:
        return "missing header " + re.sub(r".*?([\w/.]+\.h\w*).*", r"\1", text)
    return "does not compile: " + re.sub(r"‘[^’]*’|'[^']*'", "_", text).split(" (compiler")[0]


def report(rows: list[Row]) -> None:
    total = len(rows)
    ran = sum(r.outcome == "ran" for r in rows)
    compiled = sum(r.outcome != "does not compile" and r.compile_s > 0 for r in rows)
    print(f"infershape files {total}: compiled {compiled}, ran on a case {ran} "
          f"({100 * ran / total:.1f} %)")  # fmt: skip
    registering = [r for r in rows if not r.outcome.startswith("no IMPL_OP")]
    if registering:
        print(f"  of the {len(registering)} registering an InferShape: ran {ran} "
              f"({100 * ran / len(registering):.1f} %), "
              f"{sum(r.searched for r in rows)} of them on a searched case only")  # fmt: skip
    for repo in sorted({r.repo for r in rows}):
        mine = [r for r in rows if r.repo == repo]
        print(f"  {repo}: {len(mine)} files, ran {sum(r.outcome == 'ran' for r in mine)}")
    times = [r.compile_s for r in rows if r.compile_s]
    if times:
        print(f"compile per file (first run): median {statistics.median(times):.2f} s, "
              f"mean {statistics.mean(times):.2f} s, max {max(times):.1f} s")  # fmt: skip
    groups = collections.defaultdict(list)
    for row in rows:
        if row.outcome != "ran":
            groups[kind(row)].append(row)
    print(f"\nnot run: {total - ran}")
    for key, found in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(found):4}  {key}\n        e.g. {found[0].repo}/{found[0].path}: "
              f"{found[0].detail[:200]}")  # fmt: skip


def table(rows: list[Row]) -> str:
    """Every file's outcome, as bench/results/infer_sweep_*.tsv keeps it."""
    lines = ["# repository/path\toutcome\tdetail"]
    for r in rows:
        outcome = "ran (searched case)" if r.searched else r.outcome
        lines.append(f"{r.repo}/{r.path}\t{outcome}\t{r.detail[:300]}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts or bare mirrors")
    parser.add_argument("--limit", type=int, help="at most N files per repository")
    parser.add_argument("--tries", type=int, default=2000, help="searched cases per op")
    parser.add_argument("--json", type=Path, help="write every file's row here")
    parser.add_argument("--tsv", type=Path, help="write every file's outcome here")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    warnings.simplefilter("ignore")  # CannWarning: what the readers repair
    with tempfile.TemporaryDirectory(prefix="opsdk-infer-sweep-") as tmp:
        os.environ["OPSDK_CACHE_DIR"] = str(Path(tmp) / "cache")  # first-run cost
        for path in args.repos:
            repo, root = _corpus.sources(path.resolve(), Path(tmp) / "src", GLOBS)
            index = definitions(root)
            files = _corpus.files(root, "**/op_host/**/*infershape*.cpp")[: args.limit]
            for file in files:
                rows.append(sweep_file(repo, root, file, index, args.tries))
                row = rows[-1]
                print(f"{row.repo}/{row.path}: {row.outcome} ({row.compile_s:.1f} s) "
                      f"{row.detail[:160]}", flush=True)  # fmt: skip
    if not rows:
        sys.exit("no op_host/*infershape*.cpp file under the given paths")
    report(rows)
    _corpus.write_json(rows, args.json)
    if args.tsv:
        args.tsv.write_text(table(rows))
    return rows


if __name__ == "__main__":
    main()
