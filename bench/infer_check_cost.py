"""What holding fakes to the ops' C++ inference adds to ``opsdk check`` (issue 29), per op.

A ``--from-cann`` package of N ops, each with its own InferShape / InferDataType file
(names unique to the run, so nothing is cached before it), checked in the ``ge`` column
(static and dynamic, no usage contexts, ``--no-cache``) three ways, each a fresh process:
the baseline (its ``ir.py`` names no C++), the first run (each op's C++ compiles; the
toolkit every op shares is built once per machine and is not counted unless
``--cold-toolkit``) and a second run (the compiled libraries cached). Prints wall and CPU
seconds (user + system of the process and its children: g++ included) and the cost per op
over the baseline. Then what running the C++ in a worker process (crash isolation, the
default) costs against loading it in this process: the worker's start and a call.

    python bench/infer_check_cost.py [--ops 4] [--calls 2000]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opsdk._runtime import locator

OPDEF = """\
#include "register/op_def_registry.h"
namespace ops {{
class {op} : public OpDef {{
public:
    explicit {op}(const char* name) : OpDef(name)
    {{
        this->Input("x").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16}}).Format({{ge::FORMAT_ND}});
        this->Output("y").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16}}).Format({{ge::FORMAT_ND}});
        this->AICore().AddConfig("ascend910b");
    }}
}};
OP_ADD({op});
}}
"""
INFERSHAPE = """\
#include "register/op_impl_registry.h"
#include "log/log.h"
using namespace ge;
namespace ops {{
static graphStatus InferShape{op}(gert::InferShapeContext* context)
{{
    const gert::Shape* x = context->GetInputShape(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, x);
    gert::Shape* y = context->GetOutputShape(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, y);
    *y = *x;
    return GRAPH_SUCCESS;
}}
static graphStatus InferDataType{op}(gert::InferDataTypeContext* context)
{{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}}
IMPL_OP_INFERSHAPE({op}).InferShape(InferShape{op}).InferDataType(InferDataType{op});
}}
"""


def make_package(root: Path, ops: int) -> Path:
    token = secrets.token_hex(3).upper()
    project = root / "BenchInfer"
    (project / "op_host").mkdir(parents=True)
    for i in range(ops):
        op = f"Scale{chr(ord('A') + i)}X{token}"
        stem = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()
        (project / "op_host" / f"{stem}.cpp").write_text(OPDEF.format(op=op))
        (project / "op_host" / f"{stem}_infershape.cpp").write_text(INFERSHAPE.format(op=op))
    out = root / "out"
    argv = [sys.executable, "-m", "opsdk", "new", "--from-cann", str(project), "--namespace", "bi"]
    subprocess.run([*argv, "--out", str(out)], check=True, capture_output=True)
    package = out / "bench_infer"
    for kernels in package.rglob("kernels.py"):
        text = re.sub(r"raise ImplementMe\(__file__, .*\)", "return x * 2", kernels.read_text())
        kernels.write_text(text.replace("ImplementMe, ", ""))
    return package


def timed_check(package: Path) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its children, the result line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    argv = [sys.executable, "-m", "opsdk", "check", str(package), "--backend", "ge"]
    argv += ["--shapes", "static,dynamic", "--contexts", "none", "--no-cache"]
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr


def without_infer(package: Path) -> None:
    for ir in package.rglob("ir.py"):
        ir.write_text(re.sub(r"\n\s*infer_root=.*", "", ir.read_text()))


def isolation(calls: int) -> dict[str, float]:
    """Seconds a worker takes to start and to answer a call, and a call in this process."""
    from opsdk.cann import infer

    with tempfile.TemporaryDirectory(prefix="opsdk-infer-isolation-") as scratch:
        op = f"Isolated{secrets.token_hex(3).upper()}"
        (Path(scratch) / "isolated_infershape.cpp").write_text(INFERSHAPE.format(op=op))
        library = infer.build(infer.find(op, Path(scratch)), Path(scratch)).library
        given = [[infer.Given(1, (8, 16))]]
        spent = {}
        for name, isolate in (("worker", True), ("in process", False)):
            loaded = infer.Library(library, isolate=isolate)
            start = time.perf_counter()
            loaded.infer(op, given, [], 1)
            spent[f"{name} first call"] = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(calls):
                loaded.infer(op, given, [], 1)
            spent[f"{name} call"] = (time.perf_counter() - start) / calls
            loaded.close()
    for name, seconds in spent.items():
        print(f"{name:22} {seconds * 1000:8.3f} ms")
    return spent


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=4, help="ops in the package (default 4)")
    parser.add_argument("--cold-toolkit", action="store_true", help="rebuild the shared toolkit")
    parser.add_argument("--calls", type=int, default=2000, help="calls timed for isolation")
    args = parser.parse_args(argv)
    if args.cold_toolkit:
        for toolkit in (locator.cache_root() / "infer").glob("toolkit_*"):
            shutil.rmtree(toolkit)
    with tempfile.TemporaryDirectory(prefix="opsdk-infer-cost-") as scratch:
        package = make_package(Path(scratch), args.ops)
        baseline_pkg = Path(scratch) / "baseline"
        shutil.copytree(package, baseline_pkg)
        without_infer(baseline_pkg)
        runs = {}
        for name, target in (("baseline", baseline_pkg), ("first", package), ("cached", package)):
            wall, cpu, line = timed_check(target)
            runs[name] = (wall, cpu)
            print(f"{name:9} wall {wall:6.1f} s  CPU {cpu:6.1f} s  ({line})", flush=True)
    base = runs["baseline"]
    for name in ("first", "cached"):
        wall, cpu = runs[name]
        print(f"{name:9} +{(wall - base[0]) / args.ops:5.2f} s wall, "
              f"+{(cpu - base[1]) / args.ops:5.2f} s CPU per op")  # fmt: skip
    isolation(args.calls)
    return runs


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
