"""Issue 40 part 2: how many of the ``Support`` lines ``opsdk new --from-cann`` writes for real
ops their own C++ InferShape takes, static and dynamic, held (as ``opsdk new`` writes them)
against the definition's guesses alone (``accepts=None``, as before the holding).

Over the ``op_host`` folders of AscendC op repositories (checkouts or bare mirrors, walked
by ``bench/_corpus.py``; nothing of theirs is kept) holding a ``*_def.cpp`` and the op's
InferShape: each op's InferShape is compiled (:func:`opsdk.scaffold.cann_infer.acceptor`),
its specs generated both ways, and each line asked of the C++ as the ``ge`` column's cells
hand it over: its declared sizes (static), the first dynamic call's (grown) and GE's
compile of the dynamic graph (-1 at each growing dim). ``-k`` narrows to folders whose
path contains a word.

    python bench/from_cann_specs.py PATH... [-k WORD ...] [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import _corpus

from opsdk import cann
from opsdk._runtime import inputs, spec, types
from opsdk.cann.exports import file_stem
from opsdk.cann.specs import cases
from opsdk.errors import OpsdkError
from opsdk.scaffold import cann_infer
from opsdk.scaffold.cann_torch import torch_side

GLOBS = ("**/op_host/**", "**/common/**", "**/include/**")
MODES = ("static", "run", "compile")


def taken(line: str, op: spec.OpSchema, ir, accepts) -> dict[str, bool]:
    """Whether the C++ takes the Support ``line`` in each of :data:`MODES`."""
    support = eval(line, vars(inputs))  # noqa: S307 - a line the generator wrote
    given = op.by_name(support.args, support.kwargs)
    hosts = {
        ir.ir_name(n): v.at(0) if isinstance(v, inputs.ScalarSpec) else v
        for n, v in given.items()
        if v is not None and not inputs._tensor_specs([v])
    }
    tensors = {}
    for name, value in given.items():
        first = value[0] if isinstance(value, list) and value else value
        if isinstance(first, inputs.TensorSpec):
            tensors[ir.ir_name(name)] = first
    dtypes = {n: types.dtype(str(t.dtype)).ge for n, t in tensors.items()}
    answers = {}
    for mode in MODES:
        shapes = {}
        for name, t in tensors.items():
            first, grown = t.sizes(0), t.sizes(1)
            shapes[name] = {
                "static": first,
                "run": grown,
                "compile": tuple(-1 if g != f else f for f, g in zip(first, grown, strict=True)),
            }[mode]
        answers[mode] = bool(
            accepts(shapes, {k: v for k, v in hosts.items() if v is not None}, dtypes)
        )
    return answers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("-k", dest="words", action="append", default=[])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.paths:
            name, root = _corpus.sources(path, Path(tmp) / path.name, GLOBS)
            defs = _corpus.files(root, "**/op_host/*_def.cpp")
            defs = [d for d in defs if not args.words or any(w in str(d) for w in args.words)]
            for source in defs[: args.limit or None]:
                rows.extend(_op(name, root, source))
    ops = [r for r in rows if "error" not in r]
    print(f"{len(rows)} ops with an InferShape, {len(ops)} compiled and generated")
    for how in ("unheld", "held"):
        lines = [line for r in ops for line in r[how]]
        every = sum(all(line["taken"].values()) for line in lines)
        by_mode = {m: sum(line["taken"][m] for line in lines) for m in MODES}
        ops_all = sum(all(all(li["taken"].values()) for li in r[how]) for r in ops)
        print(
            f"{how:7} {every}/{len(lines)} lines taken in every mode {by_mode}; "
            f"ops whose every line is: {ops_all}/{len(ops)}"
        )
    seconds = sorted(r["seconds"] for r in ops)
    if seconds:
        print(
            f"held generation: median {seconds[len(seconds) // 2]:.2f} s, max {seconds[-1]:.2f} s"
        )
    for r in rows:
        if "error" in r:
            print(f"  {r['op']}: {r['error']}")
        else:
            worse = [li["line"] for li in r["held"] if not all(li["taken"].values())]
            for line in worse:
                print(f"  {r['op']} held, not taken: {line}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _op(repo: str, root: Path, source: Path) -> list[dict]:
    try:
        read = cann.read(source)
    except OpsdkError:
        return []
    found = []
    for op in read:
        label = f"{repo}:{source.relative_to(root).parent.parent}:{op.ir.op_type}"
        inference = cann_infer.find(source, op.ir.op_type)
        if inference is None or inference[0].infer_shape is None:
            continue
        try:
            side = torch_side(op)
            schema = spec.parse(f"b::{file_stem(op.ir)}{side.schema}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                accepts = cann_infer.acceptor(inference, side.ir, side.op)
            if accepts is None:
                found.append({"op": label, "error": "its InferShape does not compile here"})
                continue
            start = time.perf_counter()
            held = cases(schema, side.ir, side.op, accepts)
            seconds = time.perf_counter() - start
            unheld = cases(schema, side.ir, side.op, None)
        except Exception as err:  # noqa: BLE001 - a sweep reports each op's failure and goes on
            kind = "" if isinstance(err, OpsdkError) else f"{type(err).__name__}: "
            found.append({"op": label, "error": kind + (str(err).splitlines() or [""])[0]})
            continue

        def asked(lines, schema=schema, side=side, accepts=accepts):
            last = [line.rsplit("\n", 1)[-1] for line in lines]
            return [{"line": li, "taken": taken(li, schema, side.ir, accepts)} for li in last]

        found.append(
            {"op": label, "held": asked(held), "unheld": asked(unheld), "seconds": seconds}
        )
        print(f"{label}: held {held[-1].rsplit(chr(10), 1)[-1]}", file=sys.stderr)
    return found


if __name__ == "__main__":
    sys.exit(main())
