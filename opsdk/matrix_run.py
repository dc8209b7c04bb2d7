"""One `opsdk check` or `opsdk audit` run: its settings, in one pass from cells to reports.

The CLI parses flags into :class:`Settings` and calls :func:`execute`, as cookiecutter's
``cli.py`` calls ``main.cookiecutter()``. Both commands run alike: lay out the cells, keep
the one op asked for, serve cached cells (``--no-cache``, ``--last-failed``), take the
shard, run the cells in this process or each op in a child (``--isolate``, whose flags
are the settings' own, :meth:`Settings.child_flags`), say progress, write the reports.
What differs is a :class:`Suite`: which cells an op library has, how one is run and
cached, what a report records of the run. An ``--isolate`` child is the same command
with ``--only-op``: it runs through here too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from opsdk import _outputs
from opsdk.errors import OpsdkError, OutputError

__all__ = ["DEFAULT_TIMEOUT", "Outcome", "Settings", "execute"]

DEFAULT_TIMEOUT = 600.0  # seconds per op under --isolate: a whole column set on 2 cores fits
# The reports a run can write, by flag, with the file an example error message names.
REPORTS = {"--json": ".json", "--report": ".html", "--markdown": ".md"}
# Not-audited cells whose reasons an audit says (more are left to the reports).
_UNAUDITED_SAID = 12


def _child(flag: str, show: Callable[[Any], list[str]] | None = None):
    """A setting an ``--isolate`` child gets again, as ``flag`` (``show`` spells the
    value; default: a list is comma-joined, True is the bare flag, None is left out)."""
    return field(default=None, metadata={"flag": flag, "show": show})


def _spelled(flag: str, value, show) -> list[str]:
    if value is None or value is False or value == []:
        return []
    if show is not None:
        return show(value)
    if value is True:
        return [flag]
    return [flag, ",".join(value) if isinstance(value, (list, tuple)) else str(value)]


@dataclass
class Settings:
    """What a run was asked for. ``columns`` are check's columns or audit's checks
    (``--column`` / ``--checks``); fields made with :func:`_child` lay out the cells and
    are what an ``--isolate`` child is given again."""

    command: str  # "check" or "audit"
    target: str  # as the reports name it: the targets, space-separated
    columns: list[str] = _child("--column")
    shapes: list[str] = _child("--shapes")
    options: list[str] = _child("--options")
    contexts: list[str] | None = _child("--contexts")
    waivers: Path | None = _child("--waivers", lambda p: ["--waivers", str(p.resolve())])
    ir: list[Path] = _child("--ir", lambda ps: [a for p in ps for a in ("--ir", str(p.resolve()))])
    define: list[str] = _child("--define", lambda ds: [a for d in ds for a in ("--define", d)])
    no_cache: bool = _child("--no-cache")
    last_failed: bool = _child("--last-failed")
    graphs: str = "failing"
    graphs_dir: Path | None = None
    pattern: str | None = None
    only_op: str | None = None
    dump: Path | None = None
    json: Path | None = None
    report: Path | None = None
    markdown: Path | None = None
    isolate: bool = False
    quiet: bool = False
    timeout: float | None = None
    cell_timeout: float | None = None
    shard: tuple[int, int] | None = None
    targets: tuple[str, ...] = ()  # an audit's several; default: (target,)

    @classmethod
    def from_args(cls, args) -> Settings:
        """The settings an argparse namespace of `opsdk check` or `opsdk audit` holds."""
        given = vars(args)
        columns = given.get("column") if args.command == "check" else given.get("checks")
        names = {f.name for f in dataclasses.fields(cls)} - {"columns", "target"}
        named = [args.target] if isinstance(args.target, str) else args.target
        return cls(
            columns=columns,
            target=" ".join(named),
            targets=tuple(named),
            **{k: v for k, v in given.items() if k in names},
        )

    def __post_init__(self):
        self.targets = self.targets or (self.target,)
        if self.timeout is not None and not self.isolate:
            raise OpsdkError("--timeout applies to --isolate: add --isolate")
        if self.last_failed and (self.no_cache or self.shard):
            raise OpsdkError(
                "--last-failed reads the cell cache of this checkout: drop --no-cache/--shard"
            )

    @property
    def columns_flag(self) -> str:
        return "--checks" if self.command == "audit" else "--column"

    def child_flags(self, pictures: Path | None) -> list[str]:
        """The flags that lay out this run's cells again in an ``--isolate`` child, which
        draws its cells' graphs into ``pictures`` (the parent's folder)."""
        flags = []
        for f in dataclasses.fields(self):
            if "flag" in f.metadata:
                flag = self.columns_flag if f.name == "columns" else f.metadata["flag"]
                flags += _spelled(flag, getattr(self, f.name), f.metadata["show"])
        if pictures is not None:
            flags += ["--graphs", self.graphs, "--graphs-dir", str(pictures)]
        return flags

    def pictures_folder(self) -> Path | None:
        """Where a check draws cells' graphs for its reports: an --isolate child where its
        parent says, else in --dump's folder, else beside --markdown (``r.md``:
        ``r-graphs/``); None with --graphs none, without a report, or for --report alone
        (a temporary folder). An audit draws none."""
        if self.command != "check":
            return None
        if self.graphs == "none" or self.graphs_dir is not None:
            return self.graphs_dir
        if self.dump is not None and (self.report or self.markdown):
            return self.dump
        if self.markdown is not None:
            return self.markdown.with_name(f"{self.markdown.stem}-graphs")
        return None

    @property
    def draws(self) -> bool:
        """Whether the reports show pictures of cells' graphs."""
        wanted = self.report or self.markdown or self.graphs_dir
        return self.command == "check" and self.graphs != "none" and bool(wanted)


@dataclass
class Outcome:
    """What a run found: the results, the text to print after the progress lines, the
    files written, whether an interrupt cut it short, the reports the machine could not
    take (a full disk: see :func:`write_reports`), and what the run has to say of how it
    was laid out (``--shard``, ``--last-failed``, graphs drawn as text). The progress
    lines are the only output a run prints itself."""

    results: list
    summary: str
    written: list[Path]
    interrupted: bool
    unwritten: list[OutputError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Suite(Protocol):
    """What differs between `opsdk check` and `opsdk audit`."""

    name: str  # what the reports name as the run's target
    title: str  # what the reports are titled

    def cells(self, settings: Settings) -> list: ...

    def cache(self): ...

    def run(self, cells, cache, on_start, on_result, stop) -> list: ...

    def cached(self, op_cells, cache) -> list | None: ...

    def provenance(self, shard) -> dict: ...

    def said(self, results) -> list[str]: ...


class _Check:
    """An op package's conformance matrix."""

    def __init__(self, settings: Settings):
        from opsdk import harness, report
        from opsdk.harness.run import target

        self._settings = settings
        self._imported_at = time.time_ns()  # the cell cache's: what was read from then on
        self.package = target.load(settings.target)
        self.name = self.package.__name__
        self.title = report.CHECK_TITLE
        self._ops = harness.discover(self.package)

    def cells(self, settings: Settings) -> list:
        from opsdk import harness
        from opsdk.harness.variants import profiles

        chosen = profiles.parse(settings.options or [])
        return harness.cells(
            self.package,
            settings.columns,
            settings.shapes,
            settings.pattern,
            chosen,
            settings.contexts,
        )

    def cache(self):
        from opsdk.harness.run import cache as cell_cache
        from opsdk.report.graphs.pictures import wanted

        drawing = self._settings.draws
        every = self._settings.graphs == "all"
        rerun = (lambda r: wanted(r.column, r.status != "pass", every)) if drawing else None
        return cell_cache.CellCache(
            self.package,
            self._ops,
            reuse=self._settings.dump is None,
            rerun=rerun,
            imported_at=self._imported_at,
        )

    def run(self, cells, cache, on_start, on_result, stop) -> list:
        from opsdk import harness

        return harness.run_matrix(
            cells,
            on_result=on_result,
            dump_dir=self._settings.dump,
            on_start=on_start,
            stop=stop,
            cache=cache,
        )

    def cached(self, op_cells, cache) -> list | None:
        from opsdk import harness

        return harness.cached(op_cells, cache)

    def provenance(self, shard) -> dict:
        from opsdk.report.merge import provenance

        return provenance(self.package, self._ops, shard)

    def said(self, results) -> list[str]:
        return []


class _Audit:
    """An op library's audit: its schemas, Meta functions and converters."""

    def __init__(self, settings: Settings):
        from opsdk import cann, report
        from opsdk.audit import library as audit_library

        with cann.warnings_said("opsdk audit"):
            self.library = audit_library.load(
                settings.targets, settings.ir, settings.only_op, settings.define
            )
        self.name = self.library.name
        self.title = report.AUDIT_TITLE
        self._settings = settings

    def cells(self, settings: Settings) -> list:
        from opsdk.audit import AUDIT_SUITE, matrix
        from opsdk.harness import columns
        from opsdk.harness.run import waivers

        every = matrix.cells(self.library, settings.columns, settings.shapes)
        ops = list({c.op.name: c.op for c in every}.values())
        checks = settings.columns or columns.names(AUDIT_SUITE)
        waived = waivers.read(settings.waivers, ops, checks) if settings.waivers else []
        return matrix.cells(
            self.library, settings.columns, settings.shapes, settings.pattern, waived
        )

    def cache(self):
        from opsdk.audit import matrix

        return matrix.AuditCache(self.library)

    def run(self, cells, cache, on_start, on_result, stop) -> list:
        from opsdk.audit import matrix

        return matrix.run(
            self.library, cells, cache, on_start=on_start, on_result=on_result, stop=stop
        )

    def cached(self, op_cells, cache) -> list | None:
        from opsdk.audit import matrix

        return matrix.cached(op_cells, cache)

    def provenance(self, shard) -> dict:
        from opsdk.audit import matrix

        return matrix.provenance(self.library, shard)

    def said(self, results) -> list[str]:
        from opsdk.audit import matrix

        lines = [*self.library.said]
        unaudited = [r for r in results if r.status == "skip"]
        if 0 < len(unaudited) <= _UNAUDITED_SAID:
            lines += ["", *(r.describe() for r in unaudited)]
        elif unaudited:  # a sweep's many are in its reports
            lines += [
                "",
                f"{len(unaudited)} cells not audited: each with its reason in the reports "
                f"({', '.join(REPORTS)})",
            ]
        if self._settings.only_op is None:  # an --isolate child's parent says it
            lines += matrix.left_out(self.library, self._settings.columns, self._settings.pattern)
            lines += [line for line in [self.library.unused()] if line]
        missing = matrix.not_audited(results)
        ops = len({r.op for r in results})
        line = f"audited {ops - len(missing)} of {ops} ops"
        if missing:
            line += f"; not audited: {', '.join(missing)} (reasons in the reports)"
        return [*lines, line]


_SUITES = {"check": _Check, "audit": _Audit}


def check_outputs(settings, sources: tuple[Path, ...] = (), **folders) -> None:
    """The report paths (and ``folders``) checked before any work, none in ``sources``
    (:mod:`opsdk._outputs`)."""
    _outputs.check(
        {
            flag: (getattr(settings, flag[2:]), f"report{suffix}")
            for flag, suffix in REPORTS.items()
        },
        folders,
        sources,
    )


def execute(settings: Settings) -> Outcome:
    """Run ``settings``' cells, each decision made once: which cells, which cached, which
    in this shard, where each runs; then the reports. Under a watcher (the `opsdk`
    command's, :mod:`opsdk.harness.run.watch`) the cells are journaled as they run and
    the cells a process before this one finished are not run again."""
    from opsdk.harness.run import target

    folder = settings.pictures_folder()
    own = folder if folder != settings.dump else None  # --dump's folder is checked as --dump
    sources = tuple(s for t in settings.targets for s in target.sources(t))
    check_outputs(settings, sources, **{"--dump": settings.dump, "--graphs": own})
    from opsdk import report
    from opsdk.harness.run import interrupts, journal
    from opsdk.harness.run.progress import Progress

    log = journal.active()
    notes: list[str] = []
    with (
        _memory_ends(log),
        interrupts.Interrupts(f"opsdk {settings.command}") as interrupted,
        _drawn(settings, folder, notes) as drawer,
    ):
        folder = drawer.directory if drawer else None
        suite: Suite = _SUITES[settings.command](settings)
        cells = _chosen(suite, settings)
        caching = not settings.no_cache and _cache_enabled()
        cache = suite.cache() if caching else None
        shard, cells = _sharded(settings, cells, cache, notes)
        cells = _last_failed(settings, cells, cache, notes)
        if drawer:
            drawer.forget((c.op.name, c.label) for c in cells)
        done, left = log.resumed(cells) if log else ({}, cells)
        progress = Progress(len(cells), done=len(done), quiet=settings.quiet)
        interrupted.say = progress.notice
        if cache is not None:
            cache.say = progress.notice
        if log and (done or log.stop):
            _resuming(settings, log, done, len(cells), progress)
        stop = (lambda: True) if log and log.stop else interrupts.requested
        if log:
            interrupted.abort = log.abort
            log.began()
        if settings.isolate:
            ran = _isolated(settings, suite, left, progress, cache, folder)
        else:
            ran = _journaled(log, suite, left, cache, progress, stop)
        progress.close()
        by_id = done | {r.id: r for r in ran}
        results = [by_id[c.id] for c in cells]
        summary = "\n".join([report.matrix(results), *suite.said(results)])
        provenance = suite.provenance(shard)
        written, unwritten = write_reports(
            settings, results, settings.target, provenance, pictures=folder, title=suite.title
        )
    if log:
        log.done()
    stopped = interrupted.requested or bool(log and log.stop)
    return Outcome(results, summary, written, stopped, unwritten, notes)


@contextlib.contextmanager
def _memory_ends(log) -> Iterator[None]:
    """Out of memory anywhere, a journaled process ends for a fresh one
    (:meth:`opsdk.harness.run.journal.Journal.out_of_memory`)."""
    try:
        yield
    except MemoryError as err:
        if log is None:
            raise
        log.out_of_memory(err)


def _journaled(log, suite: Suite, cells, cache, progress, stop) -> list:
    """The cells run in this process, each journaled as it starts and ends when a watcher
    gave the process a journal."""

    def start(cell) -> None:
        if log:
            log.start(cell)
        progress.start(f"{cell.op.name} [{cell.label}]", op=cell.op.name)

    def finish(result) -> None:
        if log:
            log.result(result)
        progress.finish([result])

    return suite.run(cells, cache, on_start=start, on_result=finish, stop=stop)


def _resuming(settings: Settings, log, done: dict, total: int, progress) -> None:
    """What a process started after another says first: the outcome of the cell that
    process left open (it died there, or a signal aborted it), and why this one runs."""
    command = f"opsdk {settings.command}"
    death = log.before.deaths[-1] if log.before.deaths else None
    if not settings.isolate:  # under --isolate the op's progress line is the parent's
        if log.before.running:
            progress.ended_elsewhere("not run (aborted)")
        elif death and death["cell"] in done:
            result = done[death["cell"]]
            progress.ended_elsewhere(f"{result.status} in {result.layer}")
    if log.stop:
        progress.notice(f"{command}: stopped: reporting the {len(done)} of {total} cells done")
    elif death:
        progress.notice(
            f"{command}: the run's process {death['how']} in {death['cell']}; "
            f"going on in a new process ({len(done)} of {total} cells done)"
        )


def _cache_enabled() -> bool:
    from opsdk.harness.run import cache as cell_cache

    return cell_cache.enabled()


def _chosen(suite: Suite, settings: Settings) -> list:
    cells = suite.cells(settings)
    if settings.only_op is not None:
        cells = [c for c in cells if c.op.name == settings.only_op]
        if not cells and settings.command == "check":
            raise OpsdkError(f"{suite.name} declares no op named {settings.only_op!r}")
    if not cells and settings.pattern is not None:
        raise OpsdkError(f"no op of {suite.name} matches -k {settings.pattern!r}")
    if not cells:
        asked = ", ".join(settings.columns or ["the default checks"])
        raise OpsdkError(
            f"no op of {suite.name} has a cell in the columns asked for ({asked}): "
            + _why_no_cells(settings)
        )
    return cells


def _why_no_cells(settings: Settings) -> str:
    """A shape mode an asked column never runs, else the ops its column has cells for."""
    from opsdk.harness import columns

    judges = [columns.judge(name, settings.command) for name in settings.columns or ()]
    only = [
        f"{j.name} runs {'/'.join(j.shape_modes)} shapes only (--shapes)"
        for j in judges
        if settings.shapes and not set(j.shape_modes) & set(settings.shapes)
    ]
    if only:
        return "; ".join(only)
    if settings.command == "check":
        return "fusion has cells only for an op with a fusion pattern (opsdk new --pattern)"
    return "converter and infer have cells only for an op with a TorchAir converter"


def _sharded(settings: Settings, cells, cache, notes: list[str]):
    """``--shard I/N``'s plan (None without it) and the cells of this shard, balanced by the
    durations the cell cache remembers; ``notes`` gets how many."""
    from opsdk.harness.run import shard as shard_plan

    if not settings.shard:
        return None, cells
    shard = shard_plan.plan(cells, *settings.shard, cache.durations(cells) if cache else {})
    cells = shard.select(cells)
    notes.append(f"shard {shard.index}/{shard.count}: {len(cells)} of {len(shard.cells)} cells")
    return shard, cells


def _last_failed(settings: Settings, cells, cache, notes: list[str]):
    if not settings.last_failed or cache is None:
        return cells
    failed = cache.last_failed(cells)
    if not failed:
        notes.append("--last-failed: no cell failed last time: running every cell")
        return cells
    notes.append(f"--last-failed: running the {len(failed)} cell(s) that failed last time")
    cache.reuse = False
    return failed


@contextlib.contextmanager
def _drawn(settings: Settings, folder: Path | None, notes: list[str]) -> Iterator[Any]:
    """While active, the ge and npugraph_ex cells that --graphs names are drawn into
    ``folder`` (a temporary one for --report alone); yields the drawer, None when no
    report shows pictures. Without Graphviz's dot, ``notes`` gets why: they become text."""
    if not settings.draws:
        yield None
        return
    from opsdk.harness import graph_hook
    from opsdk.report.graphs import pictures, render

    missing = render.missing()
    if missing and settings.graphs_dir is None:
        notes.append(f"opsdk check: the reports show the graphs as text: {missing}")
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="opsdk-graphs-")))
        drawer = pictures.Pictures(folder, every=settings.graphs == "all")
        stack.enter_context(graph_hook.received_by(drawer))
        yield drawer


def _isolated(settings: Settings, suite: Suite, cells, progress, cache, folder) -> list:
    """Each op's cells in a child of the same command with ``--only-op``, one op after the
    other, until interrupted: the ops left are ``not run``. An op whose cells the cell
    cache holds all gets its cached results without a child."""
    from opsdk import harness
    from opsdk.harness.run import interrupts, isolate

    timeout = settings.timeout or DEFAULT_TIMEOUT
    flags = settings.child_flags(folder)
    by_op: dict[str, list] = {}
    for cell in cells:
        by_op.setdefault(cell.op.name, []).append(cell)
    results = []
    with contextlib.suppress(KeyboardInterrupt):  # a second signal between two ops' processes
        for op, op_cells in by_op.items():
            if interrupts.requested():
                break
            served = suite.cached(op_cells, cache) if cache is not None else None
            progress.start(f"{op} [{'cached' if served else 'own process'}]")
            op_results = served or isolate.check_in_child(
                settings.targets,
                op_cells,
                flags,
                timeout,
                settings.dump,
                settings.command,
                settings.cell_timeout,
            )
            progress.finish(op_results)
            results += op_results
    if cache is not None:  # a crash the child could not record: --last-failed reruns it
        for result in results:
            cache.remember(result)
    done = {r.op for r in results}
    return results + [harness.not_run(c) for c in cells if c.op.name not in done]


def write_reports(
    settings, results, target, provenance=None, environment=None, pictures=None, title=None
) -> tuple[list[Path], list[OutputError]]:
    """The reports ``settings`` ask for (``json``, ``report``, ``markdown``: a run's or a
    merge's), each written on its own, whole or not at all (:func:`opsdk._outputs.write`):
    the files written, in order, and the errors of those the machine could not take, which
    cost only themselves. ``pictures`` is where cells' graphs were drawn; ``title`` what
    they are titled (a check's conformance by default)."""
    from opsdk import report
    from opsdk.report import html as html_report
    from opsdk.report import markdown as markdown_report

    run = report.run_info(target, title or report.CHECK_TITLE)
    if settings.json or settings.report:
        environment = environment or report.environment({r.column for r in results})
    outputs = []  # (flag, path, text, appended)
    if settings.json:
        text = report.json_report(results, run, provenance, environment)
        outputs.append(("--json", settings.json, text, False))
    if settings.report:
        dumps = getattr(settings, "dump", None)
        page = html_report.render(results, environment, dumps, run, pictures)
        outputs.append(("--report", settings.report, page, False))
    if settings.markdown:
        text = markdown_report.render(
            results, pictures, Path(settings.markdown).parent, run["title"]
        )
        outputs.append(("--markdown", settings.markdown, text, False))
        step_summary = markdown_report.step_summary()
        if step_summary is not None:
            outputs.append(("$GITHUB_STEP_SUMMARY", step_summary, text + "\n", True))
    written, unwritten = [], []
    for flag, path, text, appended in outputs:
        try:
            _outputs.write(flag, path, text, appended)
        except OutputError as err:
            unwritten.append(err)
        else:
            written.append(Path(path))
    return written, unwritten
