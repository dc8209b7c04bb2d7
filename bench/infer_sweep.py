"""How many production infershape files opsdk compiles and runs (issue 29).

Over every ``op_host/*infershape*.cpp`` of the given repositories (CANN's ``hicann/ops-nn``
and ``hicann/ops-transformer``: a checkout, or a bare mirror whose headers and ``op_host``
folders are extracted to a temporary folder): find the ops the file registers
(:func:`opsdk.cann.infer.find_all`), compile the file against opsdk's stand-in headers
(:func:`opsdk.cann.infer.build`, a fresh cache: first-run cost) and call each op's
InferShape on cases made from its OpDef (``*_def.cpp`` beside it): every input of the
first dtype row, ranks 1 to 4, attrs at their defaults. A file counts when it compiles
and one of its ops returns GRAPH_SUCCESS on one case. Calls run in a forked child, so a
crash is counted, not fatal. Reports the figure, the reasons for the rest by kind (with a
file each) and the compile time per file. Nothing of the repositories is kept.

    python bench/infer_sweep.py PATH... [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from opsdk import cann
from opsdk._runtime import types
from opsdk.cann import infer
from opsdk.cann.files import opdef_files
from opsdk.errors import OpsdkError

SHAPES = ((16, 16), (4, 16, 16), (2, 4, 16, 16), (16,), (2, 4, 8, 8, 16))
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


@dataclass
class Row:
    repo: str
    path: str
    outcome: str = "ran"  # ran, or why not
    detail: str = ""
    compile_s: float = 0.0
    ops: list[str] = field(default_factory=list)


def sources(path: Path, into: Path) -> tuple[str, Path]:
    """(repository name, folder holding its files): a checkout as it is; a bare mirror with
    its headers and ``op_host`` folders extracted into ``into``."""
    git = path / "repo" if (path / "repo" / "HEAD").is_file() else path
    if not ((git / "HEAD").is_file() and (git / "objects").is_dir()):
        return path.name, path
    name = (path.name if git != path else path.parent.name).split("+")[-1]
    target = into / name
    target.mkdir(parents=True)
    for glob in ("**/*.h", "**/*.hpp", "**/op_host/**"):  # one a run: git refuses a glob
        archive = subprocess.run(  # matching nothing (ops-transformer has no .hpp file)
            ["git", f"--git-dir={git}", "archive", "HEAD", "--", f":(glob){glob}"],
            capture_output=True,
        )
        if archive.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return name, target


def cases(op: cann.CannOp):
    """(inputs, attrs, outputs) per case of ``op``: each rank of SHAPES, the first row's
    dtypes, value-depend inputs holding ones, attrs at their defaults (else a guess)."""
    ir = op.ir
    row = {name: dtypes[0] for name, dtypes in op.dtypes.items() if dtypes}
    attrs = [a.default if a.default is not None else _GUESS.get(a.type) for a in ir.attrs]
    for shape in SHAPES:
        inputs = []
        for i in ir.inputs:
            dtype = types.DTYPES.get(row.get(i.name, "DT_FLOAT16"), types.DTYPES["DT_FLOAT16"])
            data = None
            if i.value_depend:
                shape_here = (len(shape),)
                data = b"".join((1).to_bytes(8, "little") for _ in range(len(shape)))
                dtype = types.DTYPES["DT_INT64"]
                given = infer.Given(dtype.value, shape_here, data)
            else:
                given = infer.Given(dtype.value, shape)
            count = {"required": 1, "optional": 0, "dynamic": 2}[i.kind]
            inputs.append([given] * count)
        dynamic = 2 if any(i.kind == "dynamic" for i in ir.inputs) else 1
        yield inputs, attrs, sum(dynamic if o.kind == "dynamic" else 1 for o in ir.outputs)


def definition(op_type: str, file: Path) -> cann.CannOp | None:
    """The OpDef of ``op_type`` in the infershape file's ``op_host`` folder, if any."""
    for path in opdef_files(file.parent):
        try:
            found = cann.read(path, [op_type])
        except OpsdkError:
            continue
        if found:
            return found[0]
    return None


def _call(library: Path, op_type: str, op: cann.CannOp, pipe) -> None:
    """In a forked child: the first case the op's InferShape accepts, else its refusal."""
    try:
        lib = infer.Library(library)
    except OSError as err:  # a function another source of the project defines
        symbol = str(err).rpartition("undefined symbol: ")[2]
        pipe.send(("needs another source of the project", symbol))
        return
    refusal = ""
    for inputs, attrs, outputs in cases(op):
        answer = lib.infer(op_type, inputs, attrs, outputs)
        if answer.shape_status == 0:
            pipe.send(("ran", ""))
            return
        refusal = next((line for line in answer.log if line.startswith("E ")), "no log")
    pipe.send(("refused every case", refusal))


def run_op(library: Path, op_type: str, op: cann.CannOp) -> tuple[str, str]:
    parent, child = multiprocessing.Pipe()
    process = multiprocessing.get_context("fork").Process(
        target=_call, args=(library, op_type, op, child)
    )
    process.start()
    process.join(60)
    if process.is_alive():
        process.kill()
        return "timed out", ""
    if parent.poll():
        return parent.recv()
    return "crashed", f"exit {process.exitcode}"


def sweep_file(repo: str, root: Path, file: Path) -> Row:
    row = Row(repo, str(file.relative_to(root)))
    found = [i for i in infer.find_all(file).values() if i.infer_shape is not None]
    if not found:
        row.outcome, row.detail = "no IMPL_OP_INFERSHAPE(...).InferShape", ""
        return row
    start = time.perf_counter()
    try:
        built = infer.build(found[0], root)
    except infer.BuildFailure as err:
        row.compile_s = time.perf_counter() - start
        row.outcome, row.detail = "does not compile", str(err).replace(str(root) + "/", "")
        return row
    row.compile_s = time.perf_counter() - start
    outcomes = []
    for inference in found:
        op = definition(inference.op_type, file)
        if op is None:
            outcomes.append(("no OpDef beside it", inference.op_type))
            continue
        outcomes.append(run_op(built.library, inference.op_type, op))
        row.ops.append(f"{inference.op_type}: {outcomes[-1][0]}")
    ran = [o for o in outcomes if o[0] == "ran"]
    row.outcome, row.detail = ("ran", "") if ran else outcomes[0]
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


def main(argv=None) -> list[Row]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="+", type=Path, help="checkouts or bare mirrors")
    parser.add_argument("--limit", type=int, help="at most N files per repository")
    parser.add_argument("--json", type=Path, help="write every file's row here")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    warnings.simplefilter("ignore")  # CannWarning: what the readers repair
    with tempfile.TemporaryDirectory(prefix="opsdk-infer-sweep-") as tmp:
        os.environ["OPSDK_CACHE_DIR"] = str(Path(tmp) / "cache")  # first-run cost
        for path in args.repos:
            repo, root = sources(path.resolve(), Path(tmp) / "src")
            files = sorted(
                p for p in root.glob("**/op_host/**/*infershape*.cpp")
                if not {"test", "tests"} & set(p.relative_to(root).parts)
            )[: args.limit]  # fmt: skip
            for file in files:
                rows.append(sweep_file(repo, root, file))
                row = rows[-1]
                print(f"{row.repo}/{row.path}: {row.outcome} ({row.compile_s:.1f} s) "
                      f"{row.detail[:160]}", flush=True)  # fmt: skip
    if not rows:
        sys.exit("no op_host/*infershape*.cpp file under the given paths")
    report(rows)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
