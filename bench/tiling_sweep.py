"""How many 910B vector ops' tiling files opsdk compiles and runs (issue 38, item 1).

Over the ``op_host`` tiling files (those registering a TilingFunc) of the given
repositories (``hicann/ops-nn``, ``ops-math``, ``ops-transformer``; see :mod:`_corpus`)
whose op is a 910B vector op: not under an ``arch35`` (or other non-910B ``archNN``)
folder nor a cube family's (conv, matmul...), with an ``op_kernel`` whose 910B sources
use no cube/Matmul or communication API and a tiling that asks no ``matmul_tiling``.
Each is compiled against opsdk's stand-ins (:func:`opsdk.cann.tiling.build`, a fresh
cache: first-run cost) and its ops' TilingFuncs run, in a worker process, on cases made
from the op's own definition (as ``bench/infer_sweep.py`` makes them: the definition's
rows, then seeded variations; the outputs shaped as the first input) until one returns
GRAPH_SUCCESS. Reports the figure
(production and experimental apart), the reasons for the rest by kind (a compile error by
the identifier it misses), the findings on the cases that ran, and the time per op.

    python bench/tiling_sweep.py PATH... [--limit N] [--every N] [--tries N] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import _corpus
import infer_sweep

from opsdk.cann import infer, tiling, ut_cases

GLOBS = (*infer_sweep.GLOBS, "**/op_kernel/**", "**/tests/**/*tiling*.cpp")  # own tests' cases
_OTHER_ARCH = re.compile(r"/arch(?!22/)\d+/")
_NOT_VECTOR = re.compile(r"matmul|Matmul|MatMul|Mmad|LoadData|Fixpipe|hccl|Hccl|HCCL|mc2")
_CUBE_FOLDERS = frozenset({"conv", "matmul", "mc2", "gmm", "attention"})  # cube op families
_IDENTIFIER = re.compile(r"‘([^’]+)’")
_CRASHES = 5  # cases crashing before an op is reported as crashing (not searched further)


@dataclass
class Row:
    repo: str
    path: str
    outcome: str = "ran"  # ran, or why not
    detail: str = ""
    compile_s: float = 0.0
    run_s: float = 0.0  # the runs of the cases tried, cached library
    ops: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)

    @property
    def experimental(self) -> bool:
        return "experimental/" in self.path


def vector_tilings(root: Path) -> list[Path]:
    """The 910B vector ops' files registering a TilingFunc under ``root``."""
    found = []
    for file in _corpus.files(root, "**/op_host/**/*.cpp"):
        text = file.read_text(errors="replace")
        relative = "/" + str(file.relative_to(root))
        if ".Tiling(" not in text or _OTHER_ARCH.search(relative) or "matmul_tiling" in text:
            continue
        op = next(p for p in file.parents if p.name == "op_host").parent
        if _CUBE_FOLDERS & set(op.relative_to(root).parts):
            continue
        kernels = [
            p
            for p in (op / "op_kernel").rglob("*")
            if p.suffix in (".cpp", ".h") and not _OTHER_ARCH.search("/" + str(p.relative_to(op)))
        ]
        if kernels and not any(_NOT_VECTOR.search(p.read_text(errors="replace")) for p in kernels):
            found.append(file)
    return found


def case_of(case: infer_sweep.Case, op) -> tiling.Case:
    """A tiling case from an inference case: each output shaped as the first input, of
    its definition's first dtype."""
    first = next((g for given in case.inputs for g in given), infer.Given(1, (16,)))
    outputs = []
    for output in op.ir.outputs:
        dtypes = op.dtypes.get(output.name) or ("DT_FLOAT16",)
        dtype = infer_sweep.types.DTYPES[dtypes[0]].value
        outputs.append(infer.Given(dtype, first.shape))
    extra = case.outputs - len(outputs)
    outputs += outputs[-1:] * extra
    return tiling.Case(tuple(tuple(g) for g in case.inputs), tuple(outputs), tuple(case.attrs))


def run_op(library, source, op, literals, tries) -> tuple[str, str, list[str]]:
    """(outcome, detail, findings): whether a case of ``op`` tiles, else why not: the
    nodes of its own host tests first (:mod:`opsdk.cann.ut_cases`), then made ones."""
    last, crashes = "", 0
    own = ut_cases.cases(op, ut_cases.folder_of(source.sources[0]))
    made = (case_of(case, op) for case in infer_sweep.cases(op, literals, tries))
    for case in itertools.chain(own, made):
        try:
            run = library.run(source, case)
        except KeyError as err:
            return "not registered in its library", str(err), []
        except infer.Unlinked as err:
            return "needs another source of the project", err.symbol, []
        if run.status == 0:
            return "ran", "", [str(f) for f in run.findings]
        crashed = [f for f in run.findings if f.kind == "crash"]
        if crashed and "undefined symbol" in crashed[0].message:
            symbol = crashed[0].message.rpartition("undefined symbol: ")[2].rstrip(")")
            return "needs another source of the project", symbol, []
        last = str(run.findings[0]) if run.findings else f"returned {run.status}"
        crashes += bool(crashed)
        if crashes == _CRASHES:  # each costs a worker's restart: enough to call it a crash
            return "crashes", last, []
    return "no case tiles", last, []


def sweep_file(repo: str, root: Path, file: Path, index: dict, tries: int) -> Row:
    row = Row(repo, str(file.relative_to(root)))
    found = list(tiling.find_all(file).values())
    if not found:
        row.outcome = "no TilingFunc read"
        return row
    start = time.perf_counter()
    try:
        built = tiling.build(found[0], root)
    except infer.CompileFailure as err:
        row.compile_s = time.perf_counter() - start
        row.outcome, row.detail = "does not compile", str(err).replace(str(root) + "/", "")
        return row
    row.compile_s = time.perf_counter() - start
    literals = sorted(set(infer_sweep._LITERAL.findall(file.read_text(errors="replace"))))
    library = tiling.TilingLibrary(built.library, root)
    outcomes = []
    start = time.perf_counter()
    try:
        for source in found:
            ops = infer_sweep.definitions_of(source.op_type, file, index)
            if not ops:
                outcomes.append(("no definition in the repository", source.op_type, []))
            for op in ops:
                outcomes.append(run_op(library, source, op, literals, tries))
                if outcomes[-1][0] == "ran":
                    break
            row.ops.append(f"{source.op_type}: {outcomes[-1][0]}")
    finally:
        library.close()
    row.run_s = time.perf_counter() - start
    ran = [o for o in outcomes if o[0] == "ran"]
    row.outcome, row.detail, _ = ran[0] if ran else outcomes[0]
    row.findings = [f for o in ran for f in o[2]]
    return row


def kind(row: Row) -> str:
    """What groups failures of one kind: a compile error by the identifier it misses."""
    if row.outcome != "does not compile":
        return row.outcome
    return compile_kind(row.detail)


def compile_kind(detail: str) -> str:
    """A compile error's kind (``does not compile: file:line: what``): the header or the
    identifier it misses, else the error with its names elided."""
    text = detail.partition(": ")[2]
    if "No such file" in text:
        return "missing header " + re.sub(r".*?([\w/.]+\.h\w*): No such file.*", r"\1", text)
    names = _IDENTIFIER.findall(text)
    if names and re.search(r"not declared|not a member|does not name|has no member", text):
        return f"missing {'::'.join(names[1::-1]) if 'not a member' in text else names[0]}"
    return "does not compile: " + _IDENTIFIER.sub("_", text).split(" (compiler")[0]


def report(rows: list[Row]) -> None:
    for label, mine in (
        ("all", rows),
        ("production", [r for r in rows if not r.experimental]),
        ("experimental", [r for r in rows if r.experimental]),
    ):
        if mine:
            ran = sum(r.outcome == "ran" for r in mine)
            compiled = sum(r.outcome != "does not compile" for r in mine)
            print(f"{label}: {len(mine)} tiling files, compiled {compiled}, ran on a case "
                  f"{ran} ({100 * ran / len(mine):.1f} %)")  # fmt: skip
    for repo in sorted({r.repo for r in rows}):
        mine = [r for r in rows if r.repo == repo]
        print(f"  {repo}: {len(mine)} files, ran {sum(r.outcome == 'ran' for r in mine)}")
    times = [r.compile_s for r in rows if r.compile_s]
    if times:
        print(f"compile per file (first run): median {statistics.median(times):.2f} s, "
              f"mean {statistics.mean(times):.2f} s, max {max(times):.1f} s")  # fmt: skip
    runs = [r.run_s for r in rows if r.outcome == "ran"]
    if runs:
        print(f"runs per file until a case tiles (cached library): median "
              f"{statistics.median(runs):.2f} s")  # fmt: skip
    findings = [(r, f) for r in rows for f in r.findings]
    print(f"\nfindings on the first case that tiled: {len(findings)}")
    for row, finding in findings:
        print(f"  {row.repo}/{row.path}: {finding[:200]}")
    groups = collections.defaultdict(list)
    for row in rows:
        if row.outcome != "ran":
            groups[kind(row)].append(row)
    print(f"\nnot run: {sum(r.outcome != 'ran' for r in rows)}")
    for key, found in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(found):4}  {key}\n        e.g. {found[0].repo}/{found[0].path}: "
              f"{found[0].detail[:200]}")  # fmt: skip


def main(argv=None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts or bare mirrors")
    parser.add_argument("--limit", type=int, help="at most N files per repository")
    parser.add_argument("--every", type=int, default=1, help="every Nth file: a sample")
    parser.add_argument("--tries", type=int, default=200, help="searched cases per op")
    parser.add_argument("--json", type=Path, help="write every file's row here")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    warnings.simplefilter("ignore")  # CannWarning: what the readers repair
    with tempfile.TemporaryDirectory(prefix="opsdk-tiling-sweep-") as tmp:
        os.environ["OPSDK_CACHE_DIR"] = str(Path(tmp) / "cache")  # first-run cost
        for path in args.repos:
            repo, root = _corpus.sources(path.resolve(), Path(tmp) / "src", GLOBS)
            index = infer_sweep.definitions(root)
            for file in vector_tilings(root)[:: args.every][: args.limit]:
                rows.append(sweep_file(repo, root, file, index, args.tries))
                row = rows[-1]
                print(f"{row.repo}/{row.path}: {row.outcome} ({row.compile_s:.1f} s) "
                      f"{row.detail[:160]}", flush=True)  # fmt: skip
    if not rows:
        sys.exit("no 910B vector op's tiling file under the given paths")
    report(rows)
    _corpus.write_json(rows, args.json)
    return rows


if __name__ == "__main__":
    main()
