"""The `opsdk` command: new, check, audit, graph, report merge, coverage, ir, fetch-torchair,
doctor."""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from opsdk import _streams
from opsdk.errors import OpsdkError, OutputError
from opsdk.harness.run.watch import DEFAULT_CELL_TIMEOUT
from opsdk.matrix_run import DEFAULT_TIMEOUT

# What the commands import beyond the op runtime: opsdk's `tools` extra (pyproject.toml).
TOOLS = ("cookiecutter", "jinja2", "ruff", "google.protobuf", "packaging", "numpy", "yaml", "pydot")
# The audit's target read from the torch-npu wheel, never imported.
AUDIT_WHEEL = "torch_npu"
# `--graphs`: which ge/npugraph_ex cells the reports draw the graphs of.
GRAPHS = ("failing", "all", "none")


def _csv(choices):
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad) or 'empty list'}: choose from {','.join(choices)}"
            )
        return items

    return parse


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return seconds


def _choices_help(what: str, choices) -> str:
    """Help for a comma-separated list flag: its choices, all of them by default."""
    return f"comma-separated {what}, any of {', '.join(choices)} (default: all)"


class _Version(argparse.Action):
    """``--version``: the installed distribution's, read only when asked (importing
    importlib.metadata would cost every command tens of milliseconds)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from opsdk import _versions

        print(f"opsdk {_versions.opsdk_version()}")
        parser.exit()


def _choices_flag(parser: argparse.ArgumentParser, flag: str, choices, metavar: str, what: str):
    """A comma-separated list flag of ``choices``, all of them by default."""
    parser.add_argument(
        flag,
        type=_csv(choices),
        default=list(choices),
        metavar=metavar,
        help=_choices_help(what, choices),
    )


def _modes_flag(parser: argparse.ArgumentParser, what: str, default="all") -> None:
    from opsdk.axes import GRAPH_MODES

    parser.add_argument(
        "--modes",
        type=_csv(GRAPH_MODES),
        default=list(GRAPH_MODES) if default == "all" else default,
        metavar="MODES",
        help=f"{what}; comma-separated, any of {', '.join(GRAPH_MODES)} (default: all)",
    )


def _matrix_flags() -> argparse.ArgumentParser:
    """The flags `opsdk check` and `opsdk audit` share (argparse ``parents=``)."""
    from opsdk.axes import SHAPE_MODES
    from opsdk.harness.run import shard as shard_plan

    shared = argparse.ArgumentParser(add_help=False)
    _choices_flag(shared, "--shapes", SHAPE_MODES, "MODES", "shape modes")
    shared.add_argument("-k", dest="pattern", help="only ops whose name contains PATTERN")
    shared.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report here")
    shared.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="write the matrix as a self-contained HTML page",
    )
    shared.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write the matrix as Markdown (also appended to $GITHUB_STEP_SUMMARY when set)",
    )
    shared.add_argument(
        "--isolate",
        action="store_true",
        help="run each op in its own process: a crash or hang costs only that op's cells",
    )
    shared.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=f"with --isolate, seconds an op may run (default {DEFAULT_TIMEOUT:g})",
    )
    shared.add_argument(
        "--cell-timeout",
        type=_positive_seconds,
        default=DEFAULT_CELL_TIMEOUT,
        metavar="SECONDS",
        help="seconds a cell may run before its process is ended and the run goes on in a "
        f"new one (default {DEFAULT_CELL_TIMEOUT:g})",
    )
    shared.add_argument(
        "--no-cache",
        action="store_true",
        help="run every cell: neither read nor write the cell cache (.opsdk_cache/)",
    )
    shared.add_argument(
        "--shard",
        type=shard_plan.parse,
        metavar="I/N",
        help="run shard I of N (whole ops, balanced by recorded durations); merge the shards' "
        "--json reports with opsdk report merge",
    )
    shared.add_argument(
        "--explore",
        type=int,
        metavar="N",
        help="cases per op on which the infer checks hold the fake to the op's C++ "
        "InferShape beyond the declared ones (default 300; 0: none)",
    )
    # How --isolate runs one op in a child: the exact name, as reports spell it (ns::name).
    shared.add_argument("--only-op", help=argparse.SUPPRESS)
    return shared


def _parser() -> argparse.ArgumentParser:
    """The whole command line; it imports neither torch nor the harness (``--help``,
    ``--version`` and ``doctor`` stay fast)."""
    from opsdk.audit import AUDIT  # registers the audit's checks
    from opsdk.axes import DEFAULT_STYLE, SHAPE_MODES, STYLES
    from opsdk.harness import columns
    from opsdk.harness.variants import contexts, profiles

    parser = argparse.ArgumentParser(
        prog="opsdk", description="Scaffold Ascend NPU custom ops and prove they enter the graph."
    )
    parser.add_argument("--version", action=_Version, help="print opsdk's version and exit")
    sub = parser.add_subparsers(dest="command", required=True)

    new = sub.add_parser("new", help="scaffold an op package")
    new.add_argument("name", nargs="?", help="op name, a Python identifier (e.g. my_add)")
    new.add_argument("--inplace", action="store_true", help="the op writes its first input")
    new.add_argument(
        "--pair",
        action="store_true",
        help="torch_npu's in-place pair: NAME_ (writes and returns its first input) and NAME",
    )
    new.add_argument(
        "--attach",
        metavar="NS::OP",
        help="attach to an op defined elsewhere (torch_npu, op-plugin, C++): register only "
        "what it lacks",
    )
    new.add_argument(
        "--updatable",
        metavar="ARG[,ARG...]",
        type=lambda text: tuple(a.strip() for a in text.split(",") if a.strip()),
        default=(),
        help="host arguments (SymInt, SymInt[]) npugraph_ex updates on replay instead of "
        "capturing a graph per value",
    )
    new.add_argument("--namespace", help="torch.library namespace (default: custom)")
    new.add_argument("--schema", help='torch schema, e.g. "my_op(Tensor x, float a=1.0) -> Tensor"')
    new.add_argument("--style", choices=STYLES, default=DEFAULT_STYLE, help="registration style")
    new.add_argument(
        "--out", type=Path, metavar="DIR", help="directory to create it in (default: .)"
    )
    new.add_argument("--force", action="store_true", help="move an existing package aside")
    new.add_argument(
        "--autograd", action="store_true", help="register a backward (register_autograd)"
    )
    new.add_argument("--into", type=Path, metavar="DIR", help="add the op to the op package in DIR")
    new.add_argument(
        "--pattern",
        action="store_true",
        help="a fusion pattern (patterns.py): the torch code the op replaces in graphs",
    )
    new.add_argument(
        "--from-cann",
        type=Path,
        metavar="FILE|DIR",
        help="the op's CANN definition (AscendC op_host OpDef .cpp, msopgen JSON or REG_OP), "
        "or an AscendC project directory (every op it defines, one package): schema, IR and "
        "specs follow it",
    )
    _modes_flag(
        new,
        "the graph modes the package is made for: npugraph_ex alone writes no converter and "
        "no IR (its fake function is all npugraph_ex needs); --attach without --from-cann: "
        "npugraph_ex (no GE op type is made up for a library that may have none)",
        default=None,
    )
    new.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="--from-cann DIR: leave out (with a warning each) the ops opsdk cannot make, "
        "instead of failing",
    )

    matrix = _matrix_flags()
    check = sub.add_parser(
        "check", help="run the conformance matrix of an op package", parents=[matrix]
    )
    check.add_argument("target", help="op package directory or importable module")
    _choices_flag(check, "--backend", columns.names(), "COLUMNS", "backend columns")
    _modes_flag(check, "the graph modes the package is made for: without ge, no ge or fusion cells")
    check.add_argument(
        "--options",
        type=_csv((*profiles.names(), profiles.ALL)),
        default=[],
        metavar="PROFILES",
        help="also run the columns under these TorchAir option profiles, comma-separated, "
        f"any of {', '.join(profiles.names())} or {profiles.ALL} (default: none)",
    )
    check.add_argument(
        "--contexts",
        type=_csv((*contexts.names(), contexts.ALL, contexts.NONE)),
        metavar="CONTEXTS",
        help="usage contexts of the compiled columns, comma-separated, any of "
        f"{', '.join(contexts.names())}, {contexts.ALL} or {contexts.NONE} "
        "(default: view,buffer for in-place ops)",
    )
    check.add_argument(
        "--dump", type=Path, metavar="DIR", help="write each compiled graph (FX and GE) here"
    )
    check.add_argument(
        "--graphs",
        choices=GRAPHS,
        default="failing",
        help="with --report/--markdown: draw the FX and GE graphs of the failing ge and "
        "npugraph_ex cells (default), of all of them, or none",
    )
    # Where an --isolate child draws them: the parent's folder for the pictures.
    check.add_argument("--graphs-dir", type=Path, help=argparse.SUPPRESS)
    check.add_argument(
        "--last-failed", action="store_true", help="run only the cells that failed last time"
    )

    graph = sub.add_parser(
        "graph", help="draw the FX and GE graphs of one ge or npugraph_ex cell (SVG and PNG)"
    )
    graph.add_argument("target", help="op package directory or importable module")
    graph.add_argument(
        "-k", dest="pattern", required=True, help="the op whose name contains PATTERN"
    )
    graph.add_argument("--backend", choices=("ge", "npugraph_ex"), required=True)
    graph.add_argument("--shapes", choices=SHAPE_MODES, required=True)
    graph.add_argument("--context", choices=contexts.names(), help="the op in a usage context")
    graph.add_argument("--out", type=Path, required=True, metavar="DIR", help="write them here")

    audit = sub.add_parser(
        "audit",
        help="check an existing op library's schemas, Meta functions and converters",
        parents=[matrix],
    )
    audit.add_argument(
        "target",
        nargs="+",
        help="the op library: torch_npu (read from the torch-npu wheel), or directories or "
        "importable modules, one library of them all: opsdk packages, or modules defining "
        "ops with torch.library",
    )
    audit.add_argument(
        "--checks",
        type=_csv(columns.names(AUDIT)),
        metavar="CHECKS",
        help=f"comma-separated checks, any of {', '.join(columns.names(AUDIT))} (default: "
        "all, each in the graph mode an op takes: converter and infer for an op with a "
        "TorchAir converter, npugraph_ex for one without)",
    )
    audit.add_argument(
        "--waivers",
        type=Path,
        metavar="FILE",
        help="known findings to report as xfail (opsdk-waivers.toml format; backend = the check)",
    )
    audit.add_argument(
        "--ir",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="the GE side's CANN definitions: a REG_OP header, op_host OpDef source, msopgen "
        "JSON, or a folder of them (repeat for more; checked before the library's own)",
    )
    audit.add_argument(
        "-D",
        "--define",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="a macro a repository's C++ build sets (its #if branches read as that build's)",
    )

    cov = sub.add_parser(
        "coverage", help="which ops have a kernel, fake, converter, IR and input specs"
    )
    cov.add_argument("target", help="op package directory or importable module")
    cov.add_argument("--namespace", help="list every op registered in this namespace")
    cov.add_argument("--json", type=Path, metavar="FILE", help="write the table as JSON here")

    fetch = sub.add_parser(
        "fetch-torchair", help="download TorchAir (from the torch-npu wheel) for offline use"
    )
    fetch.add_argument("--force", action="store_true", help="download again over the cache")

    ir = sub.add_parser(
        "ir",
        help="export the ops' GE IR for CANN (msopgen JSON, REG_OP or an OpDef .cpp), or the "
        "aclnn API declarations CANN's build generates from it",
    )
    ir.add_argument("target", help="op package directory or importable module")
    ir.add_argument("--format", choices=("msopgen", "reg_op", "opdef", "aclnn"), default="msopgen")
    ir.add_argument(
        "--out", type=Path, metavar="DIR", help="write one file per op here (default: print)"
    )

    reports = sub.add_parser("report", help="work with the --json reports of opsdk check")
    merge = reports.add_subparsers(dest="action", required=True).add_parser(
        "merge", help="merge shard reports (opsdk check --shard I/N --json) into one matrix"
    )
    merge.add_argument("reports", nargs="+", type=Path, help="the --json reports to merge")
    merge.add_argument("--json", type=Path, help="write the merged JSON report here")
    merge.add_argument("--report", type=Path, help="write the merged matrix as an HTML page")
    merge.add_argument("--markdown", type=Path, help="write the merged matrix as Markdown")

    sub.add_parser("doctor", help="show the environment opsdk found")
    return parser


def _new(args) -> int:
    from opsdk import cann

    with cann.warnings_said("opsdk new"):
        return _new_package(args)


def _new_package(args) -> int:
    from opsdk.scaffold import NewRequest, attach_target, into, new

    name, namespace = args.name, args.namespace
    project = args.from_cann is not None and args.from_cann.is_dir()
    if args.attach is not None:
        name, namespace = attach_target(args.attach, name, namespace)
    elif name is None and args.from_cann is not None and not project:
        name = _only_op_name(args.from_cann)
    elif name is None and not project:
        raise OpsdkError("give the op's NAME (or --attach NS::OP, or --from-cann FILE|DIR)")
    request = NewRequest(
        name,
        args.inplace,
        namespace,
        args.schema,
        args.style,
        args.out or Path("."),
        args.force,
        args.autograd,
        args.from_cann,
        pair=args.pair,
        attach=args.attach is not None,
        updatable=args.updatable,
        pattern=args.pattern,
        modes=_modes_of(args),
    )
    if args.into is not None and args.out is not None:
        raise OpsdkError(
            "--out and --into exclude each other: --into DIR adds to the package in DIR"
        )
    if args.skip_unreadable and not project:
        raise OpsdkError("--skip-unreadable is for --from-cann DIR (a project of several ops)")
    if project and (args.into is not None or args.attach is not None):
        raise OpsdkError(
            "--from-cann DIR makes one package of the project's ops: drop --into/--attach, or "
            "give one op's file (--from-cann DIR/op_host/OP.cpp)"
        )
    if args.into is not None:
        added = into.add(request, args.into)
        print(f"added {added.path} to the op package {args.into}")
        print(f"next: opsdk check {args.into}")
        return 0
    if project:
        from opsdk.scaffold.cann_project import new_project

        result = new_project(request, args.from_cann, args.skip_unreadable)
    else:
        result = new(request)
    if result.backup:
        print(f"moved the existing {result.path.name} to {result.backup}")
    print(f"created {result.path}")
    print(f"next: opsdk check {result.path}")
    return 0


def _modes_of(args) -> tuple[str, ...]:
    """The graph modes `opsdk new` makes the package for: those asked, else every one, but
    npugraph_ex alone for an attached op without its CANN definition: its GE op type is
    the library's, which opsdk would otherwise make up from the op's name."""
    from opsdk.axes import GRAPH_MODES

    if args.modes is not None:
        return tuple(args.modes)
    if args.attach is not None and args.from_cann is None:
        print(
            f"--attach {args.attach}: made for npugraph_ex (no converter, no IR): its GE op "
            "type is its library's; add --from-cann FILE (its CANN definition) for the GE path"
        )
        return ("npugraph_ex",)
    return GRAPH_MODES


def _only_op_name(path: Path) -> str:
    """The op name of a CANN file that defines one op: the snake_case of its type, as the
    file's own name spells it if it does."""
    from opsdk import cann
    from opsdk.cann import files
    from opsdk.cann.exports import file_stem
    from opsdk.scaffold import cann_torch

    ir = cann_torch.pick(cann.read(path), None, str(path)).ir
    return files.op_name(ir.op_type, path, file_stem(ir))


def _check(args) -> int:
    from opsdk.harness import columns

    chosen = columns.in_modes(args.backend, args.modes)
    if not chosen:
        raise OpsdkError(
            f"--backend {','.join(args.backend)}: no column of --modes {','.join(args.modes)} "
            "(ge and fusion check the ge mode): add it to --modes, or drop --backend"
        )
    args.backend = chosen
    return _matrix(args)


def _audit(args) -> int:
    return _matrix(args)


def _matrix(args) -> int:
    """`opsdk check` and `opsdk audit`: one run (:mod:`opsdk.matrix_run`), its summary and
    the reports it wrote."""
    from opsdk import matrix_run, report
    from opsdk.cann import explore
    from opsdk.harness.run import interrupts

    if args.explore is not None:  # children (--isolate) inherit it
        os.environ[explore.ENV] = str(args.explore)

    outcome = matrix_run.execute(matrix_run.Settings.from_args(args))
    print(outcome.summary)
    lost = _wrote(args.command, outcome.written, outcome.unwritten)
    if outcome.interrupted:
        return interrupts.EXIT_CODE
    return lost or (0 if report.succeeded(outcome.results) else 1)


def _wrote(command: str, written: list[Path], unwritten: list[OutputError]) -> int:
    """Say which reports were written, then which the machine could not take (one line
    each); the exit code those cost (OutputError's, 3), 0 if none."""
    for path in written:
        print(f"wrote {path}")
    for err in unwritten:
        _said(command, err)
    return OutputError.exit_code if unwritten else 0


def _graph(args) -> int:
    """One cell run with its graphs drawn into --out (SVG and PNG; text without dot)."""
    from opsdk import _outputs

    _outputs.check({}, {"--out": args.out})
    from opsdk import harness
    from opsdk.harness import graph_hook
    from opsdk.harness.run import target
    from opsdk.report.graphs import pictures, render

    package = target.load(args.target)
    chosen = [args.context] if args.context else ["none"]
    cells = harness.cells(package, [args.backend], [args.shapes], args.pattern, (), chosen)
    ops = sorted({c.op.name for c in cells})
    if len(ops) != 1:
        found = f"matches {', '.join(ops)}" if ops else "matches no op"
        raise OpsdkError(f"-k {args.pattern!r} {found} of {package.__name__}: name one op")
    [cell] = [c for c in cells if c.context == args.context]
    missing = render.missing()
    if missing:
        print(f"opsdk graph: the graphs are written as text: {missing}")
    drawer = pictures.Pictures(args.out, every=True, png=True, flag="--out")
    drawer.forget([(cell.op.name, cell.label)])
    with graph_hook.received_by(drawer):
        result = harness.run_cell(cell)
    print(result.describe())
    if drawer.unwritten:
        raise drawer.unwritten[0]
    if not drawer.drawn:
        print(f"opsdk graph: {cell.id} compiled no graph to draw", file=sys.stderr)
        return 1
    for path in drawer.drawn:
        print(f"wrote {path}")
    return 0


def _report(args) -> int:
    from opsdk import matrix_run

    matrix_run.check_outputs(args)
    from opsdk import report
    from opsdk.report import merge

    merged = merge.merge(args.reports)
    print(report.matrix(merged.results))
    written, unwritten = matrix_run.write_reports(
        args,
        merged.results,
        merged.target,
        merged.provenance,
        merged.environment,
        title=merged.title,
    )
    lost = _wrote(args.command, written, unwritten)
    return lost or (0 if report.succeeded(merged.results) else 1)


def _coverage(args) -> int:
    import json

    from opsdk import _outputs

    _outputs.check({"--json": (args.json, "coverage.json")})
    from opsdk import harness
    from opsdk.harness.run import coverage, target

    package = target.load(args.target)
    specs = {op.spec.qualname: op.spec for op in harness.discover(package)}
    if args.namespace:
        found = coverage.namespace_ops(args.namespace)
        if not found:
            raise OpsdkError(
                f"no op is registered in namespace {args.namespace!r} after importing "
                f"{package.__name__}: check the name (as in torch.ops.NS.op)"
            )
        specs.update((spec.qualname, spec) for spec in found)
    rows = [coverage.of(spec) for spec in specs.values()]
    print(coverage.table(rows))
    if args.json:
        text = json.dumps([r.to_json() for r in rows], indent=2) + "\n"
        _outputs.write("--json", args.json, text)
        print(f"wrote {args.json}")
    return 0


def _ir_model(ir, fmt: str):
    """The op as an export needs it: the CANN definition its IR keeps (a ``--from-cann``
    package's), else with the data types its cases give (which runs the fake function),
    except the aclnn API, which has none but a ValueDepend input's host array; so a
    definition's exports are written before the reference exists."""
    from opsdk import cann
    from opsdk.harness import dtypes

    kept = cann.declared(ir)
    if kept is not None:
        return kept
    if fmt == "aclnn" and not any(i.value_depend for i in ir.inputs):
        return cann.CannOp(ir)
    return dtypes.model(ir)


def _ir(args) -> int:
    from opsdk import _outputs

    _outputs.check({}, {"--out": args.out})
    from opsdk import harness
    from opsdk._runtime import irdef
    from opsdk.cann import aclnn, exports
    from opsdk.harness.run import target

    package = target.load(args.target)
    render, file_name = {
        "msopgen": (exports.msopgen_json, lambda ir: f"{exports.file_stem(ir)}.json"),
        "reg_op": (exports.reg_op, lambda ir: f"{exports.file_stem(ir)}_proto.h"),
        # op_host/<op>_def.cpp, as CANN's ops repositories name them
        "opdef": (exports.opdef_cpp, lambda ir: f"{exports.file_stem(ir)}_def.cpp"),
        "aclnn": (aclnn.header, aclnn.file_name),
    }[args.format]
    irs = {}  # op type -> IR, in discovery order (an in-place/functional pair shares one)
    for op in harness.discover(package):
        found = irdef.for_op(op.name)
        if not found:
            raise OpsdkError(
                f"{op.name} has no GE IR definition registered: add an IrDef with "
                f"torch_op={op.name!r} to the package's ir.py"
            )
        irs.update((ir.op_type, ir) for ir in found)
    texts = {
        file_name(ir): render(_ir_model(ir, args.format)) for ir in irs.values()
    }  # all, or none
    for name, text in texts.items():
        if args.out is None:
            print(text, end="")
            continue
        path = args.out / name
        _outputs.write("--out", path, text)
        print(f"wrote {path}")
    return 0


def _fetch_torchair(args) -> int:
    from opsdk._runtime import locator

    corrupt = None
    if not args.force:
        try:
            locator.verify(deep=True)
        except locator.CorruptCache as err:
            corrupt = err
    path = locator.fetch(force=args.force or corrupt is not None)
    if corrupt is not None:
        print(f"repaired the TorchAir cache (was corrupt: {corrupt.where})")
    print(f"TorchAir is ready at {path}")
    return 0


def _doctor(args) -> int:
    from opsdk import report
    from opsdk._runtime import locator

    env = report.environment()
    for key, value in env.items():
        print(f"{key:12} {value}")
    torchair = locator.locate()
    if not torchair.fetched:
        print("TorchAir is fetched on the first ge/npugraph_ex check, or now: opsdk fetch-torchair")
    elif torchair.mode == "offline":
        try:
            locator.verify(deep=True)
        except locator.CorruptCache as err:
            print(f"TorchAir cache: corrupt: {err.where} (fix: {locator.REPAIR})")
            return 1
        print("TorchAir cache: verified")
    return 0


def _require_tools() -> None:
    """An install of the light runtime alone gets one line naming the extra, not a traceback."""
    import importlib.util

    def found(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # its parent package (google) is missing
            return False

    missing = [name for name in TOOLS if not found(name)]
    if missing:
        raise OpsdkError(
            f"needs opsdk's tools ({', '.join(missing)} missing): pip install 'opsdk[tools]'"
        )


def _findable(args) -> None:
    """What the command is pointed at exists (targets, ``--ir`` paths, ``--waivers``),
    found without importing torch or the target: a mistyped name is one line at once,
    not after the seconds a run's imports take."""
    from opsdk.harness.run import target

    named = getattr(args, "target", None)
    for name in [named] if isinstance(named, str) else named or ():
        if not (args.command == "audit" and name == AUDIT_WHEEL):
            target.findable(name)
    for path in getattr(args, "ir", ()):
        if not path.exists():
            raise OpsdkError(f"--ir {path}: no such file or folder")
    waivers = getattr(args, "waivers", None)
    if waivers is not None and not waivers.is_file():
        raise OpsdkError(f"--waivers {waivers}: no such file")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; an unknown flag is reported with its subcommand's usage (argparse
    would print the top level's) and the nearest flag of that subcommand."""
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        import difflib

        [subs] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        command = subs.choices[args.command]
        message = f"unrecognized arguments: {' '.join(unknown)}"
        flags = [f for f in command._option_string_actions if f.startswith("--")]
        near = difflib.get_close_matches(unknown[0].split("=")[0], flags, n=1, cutoff=0.75)
        command.error(message + (f" (did you mean {near[0]}?)" if near else ""))
    return args


def _said(command: str, err: OpsdkError) -> int:
    """``err`` as the user sees it, one line on stderr; its exit code."""
    print(f"opsdk {command}: error: {err}", file=sys.stderr)
    return err.exit_code


@_streams.kept
def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    handler = {
        "new": _new,
        "check": _check,
        "graph": _graph,
        "audit": _audit,
        "coverage": _coverage,
        "doctor": _doctor,
        "fetch-torchair": _fetch_torchair,
        "ir": _ir,
        "report": _report,
    }[args.command]
    try:
        _require_tools()
        _findable(args)
        return handler(args)
    except OpsdkError as err:
        return _said(args.command, err)
    except KeyboardInterrupt:  # Ctrl-C outside a check's cells: no traceback for that
        from opsdk.harness.run.interrupts import EXIT_CODE

        print(f"opsdk {args.command}: interrupted", file=sys.stderr)
        return EXIT_CODE


def command(argv: list[str]) -> int:
    """The `opsdk` command (:mod:`opsdk.console`, signals held since it started): a plain
    check or audit runs watched, in a child that a crash, a hang or an exhausted memory
    costs one cell (:mod:`opsdk.harness.run.watch`); a check or audit takes the held
    signals over (:class:`opsdk.harness.run.interrupts.Interrupts`); every other command
    gets Python's handlers back and runs as ``main`` called from Python does."""
    import signal

    from opsdk._runtime import signals
    from opsdk.harness.run import interrupts, watch

    args = _parse(argv)
    if watch.wanted(args):
        return watch.command(argv, args.cell_timeout)
    if args.command not in ("check", "audit"):
        signals.install(signal.SIGINT, signal.default_int_handler)
        signals.install(signal.SIGTERM, signal.SIG_DFL)
        if signals.take_held():
            return interrupts.EXIT_CODE
    return main(argv)


if __name__ == "__main__":
    sys.exit(main())
