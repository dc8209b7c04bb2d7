"""The `opsdk` command: new, check, audit, graph, report merge, coverage, ir, fetch-torchair,
doctor."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from pathlib import Path

from opsdk.errors import OpsdkError

# What the commands import beyond the op runtime: opsdk's `tools` extra (pyproject.toml).
TOOLS = ("cookiecutter", "jinja2", "ruff", "google.protobuf", "packaging", "numpy", "yaml", "pydot")
DEFAULT_TIMEOUT = 600.0  # seconds per op under --isolate: a whole column set on 2 cores fits
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


def _same_flag(source: argparse.ArgumentParser, parser: argparse.ArgumentParser, flag: str):
    """Give ``parser`` ``source``'s ``flag``, as it is (one spelling, one help text)."""
    action = source._option_string_actions[flag]
    kwargs = {"help": action.help, "default": action.default, "dest": action.dest}
    if isinstance(action, argparse._StoreTrueAction):
        kwargs["action"] = "store_true"
    else:
        kwargs |= {"type": action.type, "metavar": action.metavar}
    parser.add_argument(*action.option_strings, **kwargs)


def _parser() -> argparse.ArgumentParser:
    """The whole command line; it imports neither torch nor the harness (``--help``,
    ``--version`` and ``doctor`` stay fast)."""
    from opsdk.axes import AUDIT_CHECKS, DEFAULT_STYLE, SHAPE_MODES, STYLES
    from opsdk.harness import columns
    from opsdk.harness.run import shard as shard_plan
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
        "--from-cann",
        type=Path,
        metavar="FILE|DIR",
        help="the op's CANN definition (AscendC op_host OpDef .cpp, msopgen JSON or REG_OP), "
        "or an AscendC project directory (every op it defines, one package): schema, IR and "
        "specs follow it",
    )
    new.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="--from-cann DIR: leave out (with a warning each) the ops opsdk cannot make, "
        "instead of failing",
    )

    check = sub.add_parser("check", help="run the conformance matrix of an op package")
    check.add_argument("target", help="op package directory or importable module")
    _choices_flag(check, "--backend", columns.names(), "COLUMNS", "backend columns")
    _choices_flag(check, "--shapes", SHAPE_MODES, "MODES", "shape modes")
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
    check.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report here")
    check.add_argument("-k", dest="pattern", help="only ops whose name contains PATTERN")
    check.add_argument(
        "--dump", type=Path, metavar="DIR", help="write each compiled graph (FX and GE) here"
    )
    check.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="write the matrix as a self-contained HTML page",
    )
    check.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write the matrix as Markdown (also appended to $GITHUB_STEP_SUMMARY when set)",
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
        "--isolate",
        action="store_true",
        help="run each op in its own process: a crash or hang costs only that op's cells",
    )
    check.add_argument(
        "--timeout",
        type=_positive_seconds,
        metavar="SECONDS",
        help=f"with --isolate, seconds an op may run (default {DEFAULT_TIMEOUT:g})",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="run every cell: neither read nor write the cell cache (.opsdk_cache/)",
    )
    check.add_argument(
        "--last-failed", action="store_true", help="run only the cells that failed last time"
    )
    check.add_argument(
        "--shard",
        type=shard_plan.parse,
        metavar="I/N",
        help="run shard I of N (whole ops, balanced by recorded durations); merge the shards' "
        "--json reports with opsdk report merge",
    )
    # How --isolate runs one op in a child: the exact name, as reports spell it (ns::name).
    check.add_argument("--only-op", help=argparse.SUPPRESS)

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
        "audit", help="check an existing op library's schemas, Meta functions and converters"
    )
    audit.add_argument(
        "target",
        help="the op library: torch_npu (read from the torch-npu wheel), or a directory or "
        "importable module: an opsdk package, or a module defining ops with torch.library",
    )
    _choices_flag(audit, "--checks", AUDIT_CHECKS, "CHECKS", "checks")
    _same_flag(check, audit, "--shapes")
    _same_flag(check, audit, "-k")
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
    flags = ("--json", "--report", "--markdown", "--isolate", "--timeout", "--no-cache")
    for flag in (*flags, "--shard", "--only-op"):
        _same_flag(check, audit, flag)

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
    with _cann_warnings_said("opsdk new"):
        return _new_package(args)


@contextlib.contextmanager
def _cann_warnings_said(command: str):
    """What the CANN readers repaired or skipped, one line each on stderr, whether or
    not the command succeeds; other warnings as Python shows them."""
    import warnings

    from opsdk.cann import CannWarning

    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always", CannWarning)
        try:
            yield
        finally:
            for warning in heard:
                if not issubclass(warning.category, CannWarning):
                    warnings.showwarning(
                        warning.message, warning.category, warning.filename, warning.lineno
                    )
                else:
                    print(f"{command}: warning: {warning.message}", file=sys.stderr)


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


def _only_op_name(path: Path) -> str:
    """The op name of a CANN file that defines one op: the snake_case of its type, as the
    file's own name spells it if it does."""
    from opsdk import cann
    from opsdk.cann import files
    from opsdk.cann.exports import file_stem
    from opsdk.scaffold import cann_torch

    ir = cann_torch.pick(cann.read(path), None, str(path)).ir
    return files.op_name(ir.op_type, path, file_stem(ir))


_REPORTS = {"--json": ".json", "--report": ".html", "--markdown": ".md"}


def _check_outputs(args, **folders) -> None:
    """The report paths (and ``folders``) checked before any work (:mod:`opsdk._outputs`)."""
    from opsdk import _outputs

    _outputs.check(
        {flag: (getattr(args, flag[2:]), f"report{suffix}") for flag, suffix in _REPORTS.items()},
        folders,
    )


def _check(args) -> int:
    if args.timeout is not None and not args.isolate:
        raise OpsdkError("--timeout applies to --isolate: add --isolate")
    if args.last_failed and (args.no_cache or args.shard):
        raise OpsdkError(
            "--last-failed reads the cell cache of this checkout: drop --no-cache/--shard"
        )
    folder = _pictures_folder(args)
    own = folder if folder != args.dump else None  # --dump's folder is checked as --dump
    _check_outputs(args, **{"--dump": args.dump, "--graphs": own})
    from opsdk import harness, report
    from opsdk.harness.run import interrupts, target
    from opsdk.harness.run.progress import Progress
    from opsdk.harness.variants import profiles
    from opsdk.report.merge import provenance

    with interrupts.Interrupts() as interrupted, _drawn(args, folder) as drawer:
        folder = drawer.directory if drawer else None
        package = target.load(args.target)
        chosen = profiles.parse(args.options)
        cells = harness.cells(
            package, args.backend, args.shapes, args.pattern, chosen, args.contexts
        )
        if args.only_op is not None:
            cells = [c for c in cells if c.op.name == args.only_op]
            if not cells:
                raise OpsdkError(f"{package.__name__} declares no op named {args.only_op!r}")
        if not cells:
            raise OpsdkError(f"no op of {package.__name__} matches -k {args.pattern!r}")
        ops = harness.discover(package)
        cache, shard, cells = _incremental(args, package, ops, cells, folder is not None)
        if drawer:
            drawer.forget((c.op.name, c.label) for c in cells)
        progress = Progress(len(cells))
        interrupted.say = progress.notice
        if args.isolate:
            results = _run_isolated(args, cells, progress, cache, folder)
        else:
            results = harness.run_matrix(
                cells,
                on_start=lambda c: progress.start(f"{c.op.name} [{c.label}]"),
                on_result=lambda r: progress.finish([r]),
                dump_dir=args.dump,
                stop=interrupts.requested,
                cache=cache,
            )
        print(report.matrix(results))
        _write_reports(args, results, args.target, provenance(package, ops, shard), None, folder)
    if interrupted.requested:
        return interrupts.EXIT_CODE
    return 0 if report.succeeded(results) else 1


def _pictures_folder(args) -> Path | None:
    """Where `opsdk check` draws cells' graphs for its reports: an --isolate child where its
    parent says, else in --dump's folder, else beside --markdown (``r.md``: ``r-graphs/``);
    None with --graphs none, without a report, or for --report alone (a temporary folder)."""
    if args.graphs == "none" or args.graphs_dir is not None:
        return args.graphs_dir
    if args.dump is not None and (args.report or args.markdown):
        return args.dump
    if args.markdown is not None:
        return args.markdown.with_name(f"{args.markdown.stem}-graphs")
    return None


@contextlib.contextmanager
def _drawn(args, folder: Path | None):
    """While active, the ge and npugraph_ex cells that --graphs names are drawn into
    ``folder`` (a temporary one for --report alone); yields the drawer, None when no
    report shows pictures. Without Graphviz's dot, one line says so: they become text."""
    if args.graphs == "none" or not (args.report or args.markdown or args.graphs_dir):
        yield None
        return
    import tempfile

    from opsdk.harness import graph_hook
    from opsdk.report.graphs import pictures, render

    missing = render.missing()
    if missing and args.graphs_dir is None:
        print(f"opsdk check: the reports show the graphs as text: {missing}")
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="opsdk-graphs-")))
        drawer = pictures.Pictures(folder, every=args.graphs == "all")
        stack.enter_context(graph_hook.received_by(drawer))
        yield drawer


def _incremental(args, package, ops, cells, drawing: bool):
    """The cell cache (None with --no-cache), the shard plan, and the cells this run runs;
    ``drawing``: cells whose graphs the reports draw run again."""
    from opsdk.harness.run import cache as cell_cache
    from opsdk.report.graphs.pictures import wanted

    cache = None
    if not args.no_cache and cell_cache.enabled():
        every = args.graphs == "all"
        rerun = (lambda r: wanted(r.backend, r.status != "pass", every)) if drawing else None
        cache = cell_cache.CellCache(package, ops, reuse=args.dump is None, rerun=rerun)
    shard, cells = _sharded(args, cells, cache)
    if args.last_failed and cache is not None:
        failed = cache.last_failed(cells)
        if failed:
            print(f"--last-failed: running the {len(failed)} cell(s) that failed last time")
            cells, cache.reuse = failed, False
        else:
            print("--last-failed: no cell failed last time: running every cell")
    return cache, shard, cells


def _sharded(args, cells, cache):
    """``--shard I/N``'s plan (None without it) and the cells of this shard, balanced by the
    durations the cell cache remembers."""
    from opsdk.harness.run import shard as shard_plan

    if not args.shard:
        return None, cells
    shard = shard_plan.plan(cells, *args.shard, cache.durations(cells) if cache else {})
    cells = shard.select(cells)
    print(f"shard {shard.index}/{shard.count}: {len(cells)} of {len(shard.cells)} cells")
    return shard, cells


# Not-audited cells whose reasons the terminal shows (more are left to the reports).
_UNAUDITED_SAID = 12


def _audit(args) -> int:
    if args.timeout is not None and not args.isolate:
        raise OpsdkError("--timeout applies to --isolate: add --isolate")
    _check_outputs(args)
    from opsdk import report
    from opsdk.audit import library as audit_library
    from opsdk.audit import matrix as audit
    from opsdk.harness.run import cache as cell_cache
    from opsdk.harness.run import interrupts, waivers
    from opsdk.harness.run.progress import Progress

    with interrupts.Interrupts("opsdk audit") as interrupted:
        with _cann_warnings_said("opsdk audit"):
            library = audit_library.load(args.target, args.ir, args.only_op)
        every = audit.cells(library, args.checks, args.shapes)
        ops = list({c.op.name: c.op for c in every}.values())
        waived = waivers.read(args.waivers, ops, args.checks) if args.waivers else []
        cells = audit.cells(library, args.checks, args.shapes, args.pattern, waived)
        if args.only_op is not None:
            cells = [c for c in cells if c.op.name == args.only_op]
        if not cells:
            raise OpsdkError(f"no op of {library.name} matches -k {args.pattern or args.only_op!r}")
        cache = None
        if not args.no_cache and cell_cache.enabled():
            cache = audit.AuditCache(library)
        shard, cells = _sharded(args, cells, cache)
        progress = Progress(len(cells))
        interrupted.say = progress.notice
        if args.isolate:
            selection = ["--checks", ",".join(args.checks), "--shapes", ",".join(args.shapes)]
            selection += ["--no-cache"] * args.no_cache
            selection += ["--waivers", str(args.waivers.resolve())] if args.waivers else []
            selection += [arg for p in args.ir for arg in ("--ir", str(p.resolve()))]
            lookup = (lambda op_cells: audit.cached(op_cells, cache)) if cache else None
            results = _run_isolated(
                args, cells, progress, cache, command="audit", selection=selection, lookup=lookup
            )
        else:
            results = audit.run(
                library,
                cells,
                cache,
                on_start=lambda c: progress.start(f"{c.op.name} [{c.label}]"),
                on_result=lambda r: progress.finish([r]),
                stop=interrupts.requested,
            )
        print(report.matrix(results))
        unaudited = [r for r in results if r.status == "skip"]
        if 0 < len(unaudited) <= _UNAUDITED_SAID:  # a sweep's many are in its reports
            print("\n" + "\n".join(r.describe() for r in unaudited))
        missing = audit.not_audited(results)
        audited = len({r.op for r in results}) - len(missing)
        print(f"audited {audited} of {len({r.op for r in results})} ops", end="")
        print(f"; not audited: {', '.join(missing)} (reasons in the reports)" if missing else "")
        _write_reports(args, results, args.target, audit.provenance(library, shard))
    if interrupted.requested:
        return interrupts.EXIT_CODE
    return 0 if report.succeeded(results) else 1


def _run_isolated(
    args, cells, progress, cache, folder=None, command="check", selection=None, lookup=None
):
    """Each op's cells in a child `opsdk check --only-op` (``command``), one op after the
    other, until interrupted: the ops left are ``not run``. An op whose cells the cell
    cache holds all gets its cached results without a child. ``selection`` (the child's
    flags that lay out the cells) and ``lookup`` (cached results) default to check's;
    ``folder``: where a child draws its cells' graphs."""
    from opsdk import harness
    from opsdk.harness.run import interrupts, isolate

    timeout = args.timeout or DEFAULT_TIMEOUT
    if selection is None:
        selection = ["--backend", ",".join(args.backend), "--shapes", ",".join(args.shapes)]
        selection += ["--options", ",".join(args.options)] if args.options else []
        selection += ["--contexts", ",".join(args.contexts)] if args.contexts is not None else []
        selection += ["--no-cache"] * args.no_cache + ["--last-failed"] * args.last_failed
        selection += ["--graphs", args.graphs, "--graphs-dir", str(folder)] if folder else []
    if lookup is None and cache is not None:
        lookup = lambda op_cells: harness.cached(op_cells, cache)  # noqa: E731
    by_op: dict[str, list] = {}
    for cell in cells:
        by_op.setdefault(cell.op.name, []).append(cell)
    results = []
    with contextlib.suppress(KeyboardInterrupt):  # a second signal between two ops' processes
        for op, op_cells in by_op.items():
            if interrupts.requested():
                break
            served = lookup(op_cells) if lookup is not None else None
            progress.start(f"{op} [{'cached' if served else 'own process'}]")
            op_results = served or isolate.run_op(
                args.target, op_cells, selection, timeout, getattr(args, "dump", None), command
            )
            progress.finish(op_results)
            results += op_results
    if cache is not None:  # a crash the child could not record: --last-failed reruns it
        for result in results:
            cache.remember(result)
    done = {r.op for r in results}
    return results + [harness.not_run(c) for c in cells if c.op.name not in done]


def _write_reports(args, results, target, provenance=None, environment=None, pictures=None) -> None:
    """The reports asked for; ``pictures`` is the folder the cells' graphs were drawn in."""
    from opsdk import report
    from opsdk.report import html as html_report
    from opsdk.report import markdown as markdown_report

    run = report.run_info(target)
    if args.json:
        report.write_json(args.json, results, run, provenance, environment)
        print(f"wrote {args.json}")
    if args.report:
        environment = environment or report.environment({r.backend for r in results})
        dumps = getattr(args, "dump", None)
        html_report.write(args.report, results, environment, dumps, run, pictures)
        print(f"wrote {args.report}")
    if args.markdown:
        for path in markdown_report.write(args.markdown, results, pictures):
            print(f"wrote {path}")


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
    drawer = pictures.Pictures(args.out, every=True, png=True)
    drawer.forget([(cell.op.name, cell.label)])
    with graph_hook.received_by(drawer):
        result = harness.run_cell(cell)
    print(result.describe())
    if not drawer.drawn:
        print(f"opsdk graph: {cell.id} compiled no graph to draw", file=sys.stderr)
        return 1
    for path in drawer.drawn:
        print(f"wrote {path}")
    return 0


def _report(args) -> int:
    _check_outputs(args)
    from opsdk import report
    from opsdk.report import merge

    merged = merge.merge(args.reports)
    print(report.matrix(merged.results))
    _write_reports(args, merged.results, merged.target, merged.provenance, merged.environment)
    return 0 if report.succeeded(merged.results) else 1


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
        args.json.write_text(json.dumps([r.to_json() for r in rows], indent=2) + "\n")
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
        path.write_text(text)
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
        return handler(args)
    except OpsdkError as err:
        print(f"opsdk {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:  # Ctrl-C outside a check's cells: no traceback for that
        from opsdk.harness.run.interrupts import EXIT_CODE

        print(f"opsdk {args.command}: interrupted", file=sys.stderr)
        return EXIT_CODE


if __name__ == "__main__":
    sys.exit(main())
