"""opsdk's pytest plugin: an op package's conformance matrix as pytest items.

pytest loads it with opsdk (entry point ``pytest11``, name ``opsdk``), and it does
nothing until a project opts in with ``opsdk_package`` in its pytest
configuration, which is what ``opsdk new`` writes::

    [tool.pytest.ini_options]
    opsdk_package = "my_add"               # the importable op package
    opsdk_columns = ["eager", "ge"]        # optional, default: every column
    opsdk_shapes = ["static", "dynamic"]   # optional, default: every shape mode
    opsdk_options = ["frozen_parameter"]   # optional TorchAir option profiles, or ["all"]
    opsdk_contexts = ["view", "chain"]     # optional usage contexts ("all", "none"; default:
                                           # view and buffer for ops that write an input)

``opsdk_backends``, the older name of ``opsdk_columns``, is still read.

Every op x column x shape mode is then one item with the node id reports use,
``ns::my_add[ge-dynamic]``, marked with its column and shape mode (``-m ge``,
``-m "dynamic and not npugraph_ex"``), its option profile if any
(``ns::my_add[ge+frozen_parameter-static]``, ``-m frozen_parameter``) and its usage
context if any (``ns::my_add[ge-dynamic/view]``, ``-m view``), and running
exactly what ``opsdk check`` runs (:func:`opsdk.harness.run_cell`). A failing cell
reports its layer and message, not a traceback; a column that cannot run skips; a cell waived in
opsdk-waivers.toml xfails, and fails once it passes (the waiver is stale). What
third-party code warned while a cell ran is its report section ``Captured warnings
call`` (shown for a failing cell, and with ``-rA`` for every cell).

The matrix belongs to the package's test suite: it is collected unless every
path pytest was given is a file (``pytest tests/test_x.py`` runs that file
alone). Collection depends only on the package and the ini options, so
pytest-xdist workers agree on it; each worker imports the package (which sets
up the npu device) while collecting, and TorchAir at its first graph cell:
once per process. The session's items are one run, as in ``opsdk check``: columns
leave to each other what both would do (:mod:`opsdk.harness.core.run_scope`).

Cells use the cell cache ``opsdk check`` uses (:mod:`opsdk.harness.run.cache`): a cell whose
inputs did not change is not run, and its item reports the cached result (``PASSED
(cached)`` with ``-v``; the item's ``user_properties`` hold ``("opsdk_cached", True)``);
``--opsdk-no-cache`` runs every cell. Each item is marked ``xdist_group(op name)``, so
``pytest -n 4 --dist loadgroup`` keeps an op's cells on one worker, where they share
their traces; ``--opsdk-shard I/N`` runs one shard of the ops, as ``opsdk check --shard``.

A model's own tests, with or without ``opsdk_package``, get the fixture ``opsdk_fuses``:
does the model's graph get the fused op (:func:`opsdk.patterns.fuses`, offline too)::

    def test_decoder_fuses_add_rms_norm(opsdk_fuses):
        assert opsdk_fuses(decoder, x, residual, op=my_ops.OPS[0], times=2)

It fails the test with why the pattern did not fire (and the graph the pass was handed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from opsdk.axes import SHAPE_MODES
from opsdk.errors import OpsdkError
from opsdk.harness import columns
from opsdk.harness.variants import contexts, profiles

INI_PACKAGE = "opsdk_package"
INI_COLUMNS = "opsdk_columns"
INI_BACKENDS = "opsdk_backends"  # opsdk_columns' older name, still read
INI_SHAPES = "opsdk_shapes"
INI_OPTIONS = "opsdk_options"
INI_CONTEXTS = "opsdk_contexts"


@dataclass(frozen=True)
class _Settings:
    package: str
    columns: tuple[str, ...]
    shapes: tuple[str, ...]
    profiles: tuple[str, ...] = ()
    contexts: tuple[str, ...] | None = None  # None: the defaults of each op


_SETTINGS = pytest.StashKey[_Settings]()
_CACHE = pytest.StashKey[object]()  # the package's CellCache, or None
_CACHED = "opsdk_cached"  # user property of an item whose result came from the cache
# A cell's node id, ``ns::op[ge-dynamic]`` (``@group`` where xdist appends one).
_CELL_ID = re.compile(r"^(?P<op>[A-Za-z_]\w*::[A-Za-z_]\w*(?:\.\w+)?)\[[^\]]*\](?:@.*)?$")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI_PACKAGE,
        "importable op package whose opsdk conformance matrix runs as test items "
        "(setting it turns the opsdk plugin on)",
        default="",
    )
    parser.addini(INI_COLUMNS, "opsdk columns to run (default: all)", type="args", default=[])
    parser.addini(INI_BACKENDS, f"the older name of {INI_COLUMNS}", type="args", default=[])
    parser.addini(INI_SHAPES, "opsdk shape modes to run", type="args", default=list(SHAPE_MODES))
    parser.addini(INI_OPTIONS, "opsdk option profiles to run too (or all)", type="args", default=[])
    parser.addini(
        INI_CONTEXTS,
        "opsdk usage contexts of the compiled columns (default: view, buffer for in-place ops)",
        type="args",
        default=None,
    )
    group = parser.getgroup("opsdk")
    group.addoption(
        "--opsdk-no-cache",
        action="store_true",
        help="run every opsdk cell: neither read nor write the cell cache (.opsdk_cache/)",
    )
    group.addoption(
        "--opsdk-shard",
        type=_shard_option,
        metavar="I/N",
        help="run shard I of N of the opsdk cells (whole ops, as opsdk check --shard)",
    )


def _shard_option(text: str) -> tuple[int, int]:
    import argparse

    from opsdk.harness.run import shard

    try:
        return shard.parse(text)
    except argparse.ArgumentTypeError as err:
        raise pytest.UsageError(f"--opsdk-shard: {err}") from None


def pytest_configure(config: pytest.Config) -> None:
    package = config.getini(INI_PACKAGE).strip()
    if not package:
        return
    config.stash[_SETTINGS] = _Settings(
        package,
        _axis(config, _columns_ini(config), columns.names(), default=columns.names()),
        _axis(config, INI_SHAPES, SHAPE_MODES),
        profiles.parse(_axis(config, INI_OPTIONS, (*profiles.names(), profiles.ALL), empty=True)),
        _axis(config, INI_CONTEXTS, (*contexts.names(), contexts.ALL, contexts.NONE))
        if config.getini(INI_CONTEXTS)
        else None,
    )
    for column in columns.names():
        config.addinivalue_line("markers", f"{column}: opsdk cells of the {column} column")
    for mode in SHAPE_MODES:
        config.addinivalue_line("markers", f"{mode}: opsdk cells in the {mode} shape mode")
    for name in profiles.names():
        config.addinivalue_line("markers", f"{name}: opsdk cells under the {name} option profile")
    for context in contexts.names():
        config.addinivalue_line("markers", f"{context}: opsdk cells in the {context} context")
    config.addinivalue_line("markers", "xdist_group(name): pytest-xdist --dist loadgroup group")


def _columns_ini(config: pytest.Config) -> str:
    """The ini option that names the columns: ``opsdk_columns``, or its older name where
    only that one is set."""
    return (
        INI_BACKENDS
        if config.getini(INI_BACKENDS) and not config.getini(INI_COLUMNS)
        else INI_COLUMNS
    )


def _axis(
    config: pytest.Config,
    name: str,
    choices: tuple[str, ...],
    empty: bool = False,
    default: tuple[str, ...] = (),
) -> tuple[str, ...]:
    values = tuple(config.getini(name)) or default
    bad = [v for v in values if v not in choices]
    if bad or not (values or empty):
        raise pytest.UsageError(
            f"{name}: unknown {', '.join(bad) or 'empty list'}: choose from {', '.join(choices)}"
        )
    return values


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """Add the matrix to what the session collects, beside the test directories, so
    its node ids are the cells' own (``ns::op[column-shapes]``)."""
    report = yield
    settings = collector.config.stash.get(_SETTINGS, None)
    if (
        settings is not None
        and isinstance(collector, pytest.Session)
        and report.passed
        and _collects_directories(collector.config)
    ):
        report.result.append(
            OpPackage.from_parent(collector, name=settings.package, nodeid=settings.package)
        )
    return report


def _collects_directories(config: pytest.Config) -> bool:
    """False for ``pytest tests/test_x.py[::test]``: the user asked for that file alone."""
    base = config.invocation_params.dir
    return not all((base / arg.split("::")[0]).is_file() for arg in config.args)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--opsdk-shard I/N``: deselect the cells of the other shards' ops."""
    wanted = config.getoption("opsdk_shard", None)
    cell_items = [item for item in items if isinstance(item, ConformanceCell)]
    if wanted is None or not cell_items:
        return
    from opsdk.harness.run import shard

    cells = [item.cell for item in cell_items]
    cache = config.stash.get(_CACHE, None)
    plan = shard.plan(cells, *wanted, cache.durations(cells) if cache else {})
    keep = {cell.id for cell in plan.select(cells)}
    dropped = [item for item in cell_items if item.cell.id not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """``PASSED (cached)`` for a cell the cache answered."""
    if report.when == "call" and report.passed and (_CACHED, True) in report.user_properties:
        return "passed", ".", "PASSED (cached)"
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup`` groups an op's cells by their id, on any pytest: xdist's own
    grouping renames node ids, which pytest 9.2 ignores (pytest-xdist issue 1386)."""
    if config.getvalue("dist") != "loadgroup" or _SETTINGS not in config.stash:
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ByOp(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            cell = _CELL_ID.match(nodeid)
            return cell["op"] if cell else super()._split_scope(nodeid)

    return ByOp(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    """Run the items as one run, as ``opsdk check`` does (:mod:`opsdk.harness.core.run_scope`)."""
    cell_list = [item.cell for item in session.items if isinstance(item, ConformanceCell)]
    if not cell_list:
        return (yield)
    from opsdk import harness

    with harness.one_run(cell_list):
        return (yield)


class OpPackage(pytest.Collector):
    """The op package: importing it registers its ops; its cells are the items."""

    def collect(self):
        from opsdk import harness
        from opsdk.harness.run import target

        settings = self.config.stash[_SETTINGS]
        package = target.load(settings.package)
        self.config.stash[_CACHE] = _cache(self.config, package)
        for cell in harness.cells(
            package,
            settings.columns,
            settings.shapes,
            profiles=settings.profiles,
            contexts=settings.contexts,
        ):
            namespace = cell.op.spec.namespace
            yield ConformanceCell.from_parent(
                self, name=cell.id.removeprefix(f"{namespace}::"), nodeid=cell.id, cell=cell
            )

    def repr_failure(self, excinfo):
        """An opsdk error (package does not import, bad waiver) is its one line."""
        if isinstance(excinfo.value, OpsdkError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


@pytest.fixture
def opsdk_fuses():
    """:func:`opsdk.patterns.fuses` (npugraph_ex and GE), failing the test with its reason
    alone: the traceback through torch.compile would bury it."""
    from opsdk import patterns

    def fuses(fn, *inputs, **kwargs) -> dict[str, int]:
        try:
            return patterns.fuses(fn, *inputs, **kwargs)
        except AssertionError as err:
            reason = str(err)
        pytest.fail(reason, pytrace=False)  # outside the except: no chained traceback

    return fuses


def _cache(config: pytest.Config, package):
    from opsdk import harness
    from opsdk.harness.run import cache

    if config.getoption("opsdk_no_cache") or not cache.enabled():
        return None
    return cache.CellCache(package, harness.discover(package))


class ItemFailed(Exception):
    """A cell's pytest item did not pass; the text is what the user reads (the harness's
    CellFailure is what a column raised)."""


class ConformanceCell(pytest.Item):
    """One cell of the matrix: one op, one column, one shape mode."""

    def __init__(self, *, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self.add_marker(cell.column)
        self.add_marker(cell.shapes)
        if cell.profile:
            self.add_marker(cell.profile)
        if cell.context:
            self.add_marker(cell.context)
        self.add_marker(pytest.mark.xdist_group(cell.op.name))

    def runtest(self) -> None:
        from opsdk import harness

        result = harness.run_cell(self.cell, cache=self.config.stash.get(_CACHE, None))
        if result.cached:
            self.user_properties.append((_CACHED, True))
        if result.warnings:  # shown with the cell's report ("Captured warnings call", -rA)
            self.add_report_section("call", "warnings", "\n".join(result.warnings))
        if result.status == "skip":
            pytest.skip(result.message)
        if result.status == "xfail":
            pytest.xfail(f"fails in layer {result.layer}, waived: {result.waiver}")
        if result.stale_waiver:
            raise ItemFailed(f"[XPASS(strict)] {result.message}")
        if result.status != "pass":
            raise ItemFailed(("(cached) " if result.cached else "") + result.outcome())

    def repr_failure(self, excinfo):
        """The cell's layer and message: the harness already says where and what to do,
        and a traceback through the harness would bury it."""
        if isinstance(excinfo.value, ItemFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        """No source line to point at: the cell id heads the report."""
        return self.path, None, self.nodeid
