"""How many production AscendC OpDef files ``opsdk new --from-cann FILE`` turns into a package.

Runs, in this process, over every ``op_host/*_def.cpp`` of the given repositories (CANN's
``hicann/ops-nn`` and ``hicann/ops-transformer``: a checkout, or a bare mirror whose
``*_def.cpp`` files and headers are extracted to a temporary folder): the reader
(:func:`opsdk.cann.read`), the torch side of each op read
(:func:`opsdk.scaffold.cann_torch.torch_side`) and, with ``--scaffold``, the whole
``opsdk new`` (formatting included: the slow part). Reports the figure overall, per
repository, per construct the files use, and each refusal reason with a file:line.
Nothing of the repositories is kept.

    python bench/opdef_sweep.py PATH... [--scaffold] [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
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
from opsdk.cann.exports import file_stem
from opsdk.errors import OpsdkError
from opsdk.scaffold import NewRequest, cann_torch, new

# What a bare mirror's files are extracted for.
GLOBS = ("**/op_host/*_def.cpp", "**/*.h")
# What a file is written with, found by its text (a report's rows, not the reader's logic).
CONSTRUCTS = {
    "file constants": r"(?m)^(static |constexpr |const )",
    "helper functions": r"(?m)^(static |inline |template)[^;{]*\)\s*(const\s*)?\{?\s*$",
    "templates": r"template\s*<",
    "class methods": r"(?m)^\s*(private|protected):",
    "macros": r"(?m)^\s*#define",
    "project includes": r'#include\s+"\.\.?/',
    "loops": r"\b(for|while)\s*\(",
    "switch/lambda": r"\bswitch\s*\(|\[&?\w*\]\s*\(",
    "per-chip configs": r"OpAICoreConfig\s+\w+\s*[;=]",
    "config inputs": r"\w+\.Input\(",
    "DataTypeList/FormatList": r"\.(DataTypeList|FormatList)\(",
    "Scalar/ScalarList": r"\.Scalar(List)?\(\)",
    "ValueDepend": r"\.ValueDepend\(",
    "Follow": r"\.Follow\(",
    "OutputShapeDependOnCompute": r"\.OutputShapeDependOnCompute\(",
    "InitValue": r"\.InitValue\(",
    "MC2": r"MC2\(\)",
    "std::map": r"std::map<",
}


@dataclass
class Row:
    repo: str
    path: str
    constructs: list[str]
    read_s: float = 0.0
    read: str = "ok"  # or the refusal
    ops: int = 0
    torch: list[str] = field(default_factory=list)  # per op: "ok" or the refusal
    scaffold: list[str] = field(default_factory=list)
    scaffold_s: list[float] = field(default_factory=list)

    @property
    def package(self) -> bool:
        done = self.scaffold if self.scaffold else self.torch
        return self.read == "ok" and bool(done) and all(r == "ok" for r in done)


def reason(err: Exception) -> str:
    """A refusal without its file, line and names: what groups refusals of one kind."""
    text = str(err).splitlines()[0]
    text = re.sub(r"^\S+?:\d+: |^\S+: ", "", text).removesuffix(
        "; change that line, or give the op as msopgen JSON or REG_OP"
    )
    return re.sub(r"'\w+'|\"[^\"]*\"|\b\d+\b", "_", text)


def sweep_file(repo: str, root: Path, file: Path, scaffold: bool, out: Path) -> Row:
    text = file.read_text(encoding="utf-8", errors="replace")
    row = Row(
        repo,
        str(file.relative_to(root)),
        [c for c, rx in CONSTRUCTS.items() if re.search(rx, text)],
    )
    start = time.perf_counter()
    try:
        ops = cann.read(file)
    except OpsdkError as err:
        row.read_s = time.perf_counter() - start
        row.read = str(err).splitlines()[0].replace(str(root) + "/", "")
        return row
    row.read_s = time.perf_counter() - start
    row.ops = len(ops)
    for op in ops:
        try:
            cann_torch.torch_side(op)
            row.torch.append("ok")
        except OpsdkError as err:
            row.torch.append(str(err).splitlines()[0])
            continue
        if scaffold:
            start = time.perf_counter()
            request = NewRequest(
                file_stem(op.ir), namespace="sweep", out=out, from_cann=file, force=True
            )
            try:
                new(request)
                row.scaffold.append("ok")
            except OpsdkError as err:
                row.scaffold.append(str(err).splitlines()[0])
            row.scaffold_s.append(time.perf_counter() - start)
    return row


def report(rows: list[Row], scaffold: bool) -> None:
    total = len(rows)
    made = sum(r.package for r in rows)
    read = sum(r.read == "ok" for r in rows)
    print(f"files {total}: read {read} ({100 * read / total:.1f} %), "
          f"packages {made} ({100 * made / total:.1f} %)"
          f"{'' if scaffold else ' (torch side; --scaffold runs opsdk new whole)'}")  # fmt: skip
    for repo in sorted({r.repo for r in rows}):
        mine = [r for r in rows if r.repo == repo]
        print(f"  {repo}: {len(mine)} files, read {sum(r.read == 'ok' for r in mine)}, "
              f"packages {sum(r.package for r in mine)}")  # fmt: skip
    times = [r.read_s * 1000 for r in rows]
    print(f"read time per file: median {statistics.median(times):.1f} ms, "
          f"mean {statistics.mean(times):.1f} ms, max {max(times):.0f} ms")  # fmt: skip
    spent = [s for r in rows for s in r.scaffold_s]
    if spent:
        print(f"opsdk new per op: median {statistics.median(spent):.2f} s, "
              f"total {sum(spent):.0f} s")  # fmt: skip
    print("\nby construct (files using it: read, packages):")
    for construct in CONSTRUCTS:
        using = [r for r in rows if construct in r.constructs]
        if using:
            print(f"  {construct:28} {len(using):4}: read {sum(r.read == 'ok' for r in using):4}, "
                  f"packages {sum(r.package for r in using):4}")  # fmt: skip
    for title, refusals in (
        ("reader refusals", [(r, r.read) for r in rows if r.read != "ok"]),
        ("torch side refusals", [(r, t) for r in rows for t in r.torch if t != "ok"]),
        ("opsdk new refusals", [(r, s) for r in rows for s in r.scaffold if s != "ok"]),
    ):
        groups = collections.defaultdict(list)
        for row, text in refusals:
            groups[reason(Exception(text))].append((row, text))
        print(f"\n{title}: {len(refusals)}")
        for key, found in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            row, text = found[0]
            print(f"  {len(found):4}  {key}\n        e.g. {row.repo}/{row.path}: {text}")


def main(argv=None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts or bare mirrors")
    parser.add_argument("--scaffold", action="store_true", help="run opsdk new for each op")
    parser.add_argument("--limit", type=int, help="at most N files per repository")
    parser.add_argument("--json", type=Path, help="write every file's row here")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    warnings.simplefilter("ignore")  # CannWarning: what the readers repair, not refusals
    with tempfile.TemporaryDirectory(prefix="opsdk-opdef-sweep-") as tmp:
        for path in args.repos:
            repo, root = _corpus.sources(path.resolve(), Path(tmp) / "src", GLOBS)
            files = _corpus.files(root, "**/op_host/*_def.cpp")[: args.limit]
            out = Path(tmp) / "out" / repo
            rows += [sweep_file(repo, root, f, args.scaffold, out) for f in files]
    if not rows:
        sys.exit("no op_host/*_def.cpp file under the given paths")
    report(rows, args.scaffold)
    _corpus.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
