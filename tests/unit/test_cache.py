"""The cell cache: a cell reruns exactly when something its result depends on changed.

An op library on disk (its first op in the package, a second op added as a subpackage,
as `opsdk new --into` lays it out) runs through a counting column registered by this
test; which cells the column ran says which results the cache served. Key parts,
corrupt entries, waivers, concurrency and an unwritable cache, in process.
"""

import errno
import hashlib
import importlib
import itertools
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import opsdk
from opsdk import harness, report
from opsdk.errors import SetupError
from opsdk.harness import columns, failures
from opsdk.harness.cell import Cell, CellFailure, Result
from opsdk.harness.core import run_scope
from opsdk.harness.run import cache as cell_cache
from opsdk.harness.run import fingerprint
from opsdk.harness.run.cache import CellCache

RAN: list[str] = []  # ids of the cells the counting column ran
FAIL: dict[str, BaseException] = {}  # cell id -> what the counting column raises for it
DURING: dict[str, Callable[[], None]] = {}  # cell id -> what happens while it runs
_numbers = itertools.count()


def run(cell, dump_dir=None) -> None:
    """The counting column's implementation."""
    RAN.append(cell.id)
    DURING.pop(cell.id, lambda: None)()
    if cell.id in FAIL:
        raise FAIL[cell.id]


@pytest.fixture
def counting():
    RAN.clear()
    FAIL.clear()
    DURING.clear()
    with columns.register(columns.Column("counting", __name__, (), "eager")):
        yield


@pytest.fixture
def lib(tmp_path, monkeypatch, counting):
    """An imported op library: ``first`` in the package, ``second`` in a subpackage."""
    n = next(_numbers)
    name, ns = f"cachelib{n}", f"opsdk_unit_cache{n}"
    project = tmp_path / "project"
    pkg = project / name
    (pkg / "second").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (pkg / "helpers.py").write_text("SCALE = 1\n")
    (pkg / "kernels.py").write_text("# the first op's kernel\n")
    (pkg / "__init__.py").write_text(
        "import torch\nfrom opsdk.oplib import import_added_ops\n"
        f"_lib = torch.library.Library({ns!r}, 'DEF')\n"
        "_lib.define('first(Tensor x) -> Tensor')\n"
        f"OPS = (torch.ops.{ns}.first.default, *import_added_ops(__name__, __path__))\n"
    )
    (pkg / "second" / "__init__.py").write_text(
        f"import torch\n_lib = torch.library.Library({ns!r}, 'FRAGMENT')\n"
        f"_lib.define('second(Tensor x) -> Tensor')\nOPS = (torch.ops.{ns}.second.default,)\n"
    )
    (pkg / "second" / "kernels.py").write_text("# the second op's kernel\n")
    monkeypatch.syspath_prepend(str(project))
    module = importlib.import_module(name)
    ops = harness.discover(module)
    cells = [Cell(op, "counting", s) for op in ops for s in ("static", "dynamic")]
    return SimpleNamespace(module=module, pkg=pkg, project=project, ops=ops, cells=cells)


def _run(lib, cells=None, **options) -> list[Result]:
    """One run in a fresh cache object, as a new process would have."""
    RAN.clear()
    cache = CellCache(lib.module, lib.ops, **options)
    return harness.run_matrix(cells or lib.cells, cache=cache)


def _ops_run() -> set[str]:
    return {cell_id.split("::")[1].split("[")[0] for cell_id in RAN}


def test_a_rerun_serves_every_unchanged_cell_from_the_cache(lib):
    first = _run(lib)
    assert len(RAN) == 4 and not any(r.cached for r in first)
    again = _run(lib)
    assert RAN == [] and all(r.cached for r in again)
    assert [replace(r, cached=False) for r in again] == first
    assert report.summary(again) == "4 pass (4 cached)"
    assert (lib.project / cell_cache.DIR_NAME / ".gitignore").read_text().endswith("*\n")


@pytest.mark.parametrize(
    ("edited", "reran"),
    [
        ("second/kernels.py", {"second"}),  # an added op's own file: that op only
        ("second/new_kernel.cpp", {"second"}),
        ("kernels.py", {"first", "second"}),  # the package's files are every op's
        ("helpers.py", {"first", "second"}),
        ("../pyproject.toml", {"first", "second"}),
    ],
)
def test_editing_a_source_reruns_the_ops_that_depend_on_it(lib, edited, reran):
    _run(lib)
    path = (lib.pkg / edited).resolve()
    path.write_text((path.read_text() if path.exists() else "") + "# edited\n")
    results = _run(lib)
    assert _ops_run() == reran
    assert {r.op.split("::")[1] for r in results if not r.cached} == reran


def test_a_waiver_is_applied_to_cached_results_without_a_rerun(lib):
    FAIL[lib.cells[0].id] = CellFailure("eager", "wrong numbers")
    _run(lib)
    (lib.project / "opsdk-waivers.toml").write_text("# a waiver file is no source\n")
    waived = [replace(lib.cells[0], waiver="known bug"), *lib.cells[1:]]
    results = _run(lib, waived)
    assert RAN == []
    assert (results[0].status, results[0].layer, results[0].cached) == ("xfail", "eager", True)


def test_an_ops_cells_are_served_together_or_not_at_all(lib):
    """What --isolate asks before it starts an op's process: all of the op's results from
    the cache (waivers applied), or None, running nothing either way."""
    cells = [c for c in lib.cells if c.op is lib.ops[0]]
    FAIL[cells[0].id] = CellFailure("eager", "wrong numbers")
    _run(lib, cells[:1])
    RAN.clear()
    assert harness.cached(cells, CellCache(lib.module, lib.ops)) is None  # cells[1] never ran
    _run(lib, cells)
    RAN.clear()
    waived = [replace(cells[0], waiver="known bug"), cells[1]]
    served = harness.cached(waived, CellCache(lib.module, lib.ops))
    assert RAN == [] and [(r.status, r.cached) for r in served] == [
        ("xfail", True),
        ("pass", True),
    ]


@pytest.mark.parametrize(
    "part", ["opsdk", "opsdk_sources", "python", "torch", "npu", "torch_npu", "torchair"]
)
def test_a_version_change_reruns_every_cell(lib, monkeypatch, part):
    _run(lib)
    monkeypatch.setattr(fingerprint, "_versions", {**fingerprint.versions(), part: "changed"})
    _run(lib)
    assert len(RAN) == 4


def test_the_versions_are_read_from_what_is_installed(monkeypatch, tmp_path):
    monkeypatch.setattr(fingerprint, "_versions", None)
    monkeypatch.setattr(fingerprint, "_OPSDK_DIR", tmp_path)
    monkeypatch.setattr(opsdk, "__version__", "9.9.9")
    monkeypatch.setattr(torch, "__version__", "3.0.0")
    (tmp_path / "cli.py").write_text("# opsdk\n")
    before = fingerprint.versions()
    assert (before["opsdk"], before["torch"]) == ("9.9.9", "3.0.0")
    assert before["torchair"].startswith(("offline (torch_npu ", "real (torch_npu "))
    monkeypatch.setattr(fingerprint, "_versions", None)
    (tmp_path / "cli.py").write_text("# opsdk, edited\n")
    assert fingerprint.versions()["opsdk_sources"] != before["opsdk_sources"]


def test_every_coordinate_of_a_cell_and_of_its_run_is_in_its_key(lib):
    cache = CellCache(lib.module, lib.ops)
    first, second = lib.ops
    cell = Cell(first, "counting", "static")
    variants = [
        cell,
        Cell(second, "counting", "static"),
        Cell(first, "eager", "static"),
        Cell(first, "counting", "dynamic"),
        Cell(first, "counting", "static", context="view"),
        Cell(first, "counting", "static", profile="frozen_parameter"),
    ]
    assert len({cache.key(c) for c in variants}) == len(variants)
    # opcheck leaves its AOT dispatch tests to aot_eager when both run: another result.
    opcheck = Cell(first, "opcheck", "static")
    with run_scope.together({"opcheck"}):
        alone = cache.key(opcheck)
    with run_scope.together({"opcheck", "aot_eager"}):
        beside_aot = cache.key(opcheck)
    with run_scope.together({"opcheck", "ge"}):
        beside_ge = cache.key(opcheck)
    assert alone != beside_aot and alone == beside_ge


def _entries(lib) -> list[Path]:
    return sorted((lib.project / cell_cache.DIR_NAME).glob("v*/cells/*/*.json"))


def test_a_corrupt_or_foreign_entry_is_ignored_and_written_again(lib):
    _run(lib)
    entries = _entries(lib)
    assert len(entries) == 4
    entries[0].write_text(entries[0].read_text()[:20])  # truncated
    entries[1].write_text(entries[2].read_text())  # another cell's result
    entries[3].write_text(json.dumps({"key": entries[3].stem, "result": {"op": 1}}))
    _run(lib)
    assert len(RAN) == 3
    _run(lib)
    assert RAN == []


def test_only_outcomes_that_say_something_about_the_op_are_kept(lib):
    first, second, third, fourth = (c.id for c in lib.cells)
    FAIL.update(
        {
            first: CellFailure("fake", "wrong shape"),
            second: RuntimeError("the kernel raised"),
            third: SetupError("no TorchAir here"),
        }
    )
    results = _run(lib)
    assert [(r.status, r.layer) for r in results] == [
        ("fail", "fake"),
        ("error", "eager"),
        ("error", "setup"),
        ("pass", None),
    ]
    _run(lib)
    assert RAN == [third]  # a setup error is about this machine: asked again
    process = Result("ns::op", "ge", "static", "error", "process", "SIGSEGV")
    skip = Result("ns::op", "ge", "static", "skip")
    assert not cell_cache.cacheable(process) and not cell_cache.cacheable(skip)


def test_results_the_cache_must_not_serve_are_run_again_and_kept(lib):
    """What a report draws pictures of (`opsdk check --report`: failing cells) runs again."""
    failing = lib.cells[0].id
    FAIL[failing] = CellFailure("ge-graph", "baked in")
    _run(lib)
    _run(lib, rerun=lambda result: result.status != "pass")
    assert RAN == [failing]
    _run(lib)
    assert RAN == []  # kept: a run that draws nothing serves it


def test_last_failures_and_durations_are_kept_per_cell(lib):
    FAIL[lib.cells[1].id] = CellFailure("eager", "wrong")
    _run(lib)
    cache = CellCache(lib.module, lib.ops)
    assert cache.last_failed(lib.cells) == [lib.cells[1]]
    assert set(cache.durations(lib.cells)) == {c.id for c in lib.cells}
    FAIL.clear()
    _run(lib, reuse=False)  # what --last-failed does: run again, whatever is cached
    assert len(RAN) == 4 and cache.last_failed(lib.cells) == []


def test_a_rerun_served_from_the_cache_writes_no_last_outcome_again(lib, monkeypatch):
    _run(lib)
    written, write = [], CellCache._write
    monkeypatch.setattr(
        CellCache,
        "_write",
        lambda self, path, data: written.append(path) or write(self, path, data),
    )
    _run(lib)
    assert RAN == [] and written == []  # every outcome and duration is as it was
    FAIL[lib.cells[1].id] = CellFailure("eager", "wrong")
    _run(lib, reuse=False)  # an outcome that changed is written
    assert CellCache(lib.module, lib.ops).last_failed(lib.cells) == [lib.cells[1]]


def test_concurrent_writers_never_leave_a_partial_entry(lib):
    cache = CellCache(lib.module, lib.ops)
    cell = lib.cells[0]
    big = Result(cell.op.name, "counting", "static", "fail", "eager", "x" * 200_000)
    with run_scope.together({"counting"}):
        cache.put(cell, big)
        [path] = _entries(lib)
        torn = []

        def write():
            for _ in range(30):
                cache.put(cell, big)

        def read():
            for _ in range(200):
                try:
                    json.loads(path.read_text())
                except ValueError:
                    torn.append(path)
                if cache.get(cell) is None:
                    torn.append(cell)

        threads = [threading.Thread(target=f) for f in (write, write, read, read)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert torn == []
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def _wrapped(err: BaseException) -> RuntimeError:
    """``err`` as Dynamo hands it on: the cause of its own error."""
    wrapper = RuntimeError("backend compiler failed")
    wrapper.__cause__ = err
    return wrapper


def _broken(cells) -> None:
    """The code of ``cells``' op fails them all."""
    FAIL.update({c.id: CellFailure("eager", "broken") for c in cells})


def test_code_edited_during_the_run_is_never_cached_as_the_code_the_run_started_from(lib, capsys):
    """A cell imports modules of the op as it runs (converter.py, in the first compiled
    cell): after an edit mid-run the next cells run the edited code. Their passes must not
    be served later for the broken code the run started from."""
    kernels = lib.pkg / "kernels.py"
    broken = kernels.read_text()
    _broken(lib.cells)

    def fix():  # the edit, and the fixed code the cells after it import
        kernels.write_text(broken + "# fixed\n")
        for later in lib.cells[1:]:
            del FAIL[later.id]

    DURING[lib.cells[0].id] = fix
    first = _run(lib)
    assert [r.status for r in first] == ["fail", "pass", "pass", "pass"]
    said = capsys.readouterr().err.splitlines()
    assert [line for line in said if "changed during the run" in line] == [
        f"opsdk: {kernels} changed during the run (seen after {lib.cells[0].op.name} "
        f"[{lib.cells[0].label}]): no result of {', '.join(op.name for op in lib.ops)} from "
        "there on is cached; run again to check the code as it is now"
    ]
    kernels.write_text(broken)  # the code the run started from again (an editor's undo)
    _broken(lib.cells)
    again = _run(lib)
    assert len(RAN) == 4 and [r.status for r in again] == ["fail"] * 4


def test_a_file_saved_while_the_package_was_imported_keeps_nothing_of_the_run(lib, capsys):
    """Read after the import, the sources may be newer than the code imported: a file
    changed since the import began (`opsdk check` knows when) counts as an edit."""
    time.sleep(2 * fingerprint._TICK_NS / 1e9)  # the fixture's own writes are older
    importing = time.time_ns()  # the fixture imported the package; say it began here
    helpers = lib.pkg / "helpers.py"
    helpers.write_text("SCALE = 2\n")  # saved while it ran: the code may be the file before
    harness.run_matrix(lib.cells, cache=CellCache(lib.module, lib.ops, imported_at=importing))
    assert f"opsdk: {helpers} changed during the run" in capsys.readouterr().err
    _run(lib)
    assert len(RAN) == 4


def test_sources_edited_back_during_the_run_keep_nothing_after_the_edit(lib):
    """Edited and edited back between two cells, the sources read as they started, but a
    module imported in between holds the edit: nothing of the op after it is kept."""
    helpers = lib.pkg / "helpers.py"
    original = helpers.read_text()
    DURING[lib.cells[0].id] = lambda: helpers.write_text("SCALE = 2\n")
    DURING[lib.cells[1].id] = lambda: helpers.write_text(original)
    _run(lib)
    _run(lib)
    assert len(RAN) == 4


def test_an_edit_during_the_run_costs_only_the_ops_whose_sources_it_touched(lib):
    DURING[lib.cells[0].id] = lambda: (lib.pkg / "second" / "kernels.py").write_text("# new\n")
    _run(lib)
    _run(lib)
    assert _ops_run() == {"second"}


def test_the_sources_are_the_regular_files(lib, tmp_path):
    """An editor's lock file (a dangling symlink), a FIFO and a socket in the package are no
    sources, and the FIFO is never opened (that would block); a symlink to a regular file
    is its target's content, wherever the target is."""
    before = fingerprint.op_sources(lib.module, lib.ops)
    (lib.pkg / ".#kernels.py").symlink_to(lib.pkg / "gone.py")
    os.mkfifo(lib.pkg / "pipe")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(lib.pkg / "s"))
        read = []
        reader = threading.Thread(
            target=lambda: read.append(fingerprint.op_sources(lib.module, lib.ops)), daemon=True
        )
        reader.start()
        reader.join(timeout=30)
        assert read == [before]
    outside = tmp_path / "shared_helpers.py"
    outside.write_text("X = 1\n")
    (lib.pkg / "linked.py").symlink_to(outside)
    linked = fingerprint.op_sources(lib.module, lib.ops)
    assert linked != before
    outside.write_text("X = 2\n")
    assert fingerprint.op_sources(lib.module, lib.ops) not in (before, linked)


def test_a_file_is_read_again_only_when_it_changed(lib, monkeypatch):
    """Digesting after every cell costs a stat per file: a file is read again when its stat
    changed, or while it changed too recently to tell (a timestamp is a clock tick)."""
    reads = []
    file_digest = hashlib.file_digest
    monkeypatch.setattr(
        fingerprint.hashlib, "file_digest", lambda f, d: reads.append(f) or file_digest(f, d)
    )
    sources = fingerprint.Sources(lib.module, lib.ops)
    files = len(sources.read().files)
    assert len(reads) == files > 4
    sources.read()
    assert len(reads) == 2 * files  # all just written: too recent to trust their stat
    monkeypatch.setattr(fingerprint, "_RACY_NS", -(10**12))  # now old enough
    reads.clear()
    first = sources.read()
    assert len(reads) == files
    reads.clear()
    assert sources.read() == first and reads == []
    helpers = lib.pkg / "helpers.py"
    os.utime(helpers, ns=(0, 0))  # stat changed, bytes did not
    helpers.write_text("SCALE = 2\n")  # same size, another mtime and ctime
    assert sources.read().digests != first.digests and len(reads) == 1


@pytest.mark.parametrize(
    "raised",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        failures.as_failure(OSError(errno.ENOSPC, "full"), default_layer="replay"),
        _wrapped(OSError(errno.EDQUOT, "Disk quota exceeded")),
        _wrapped(SetupError("cannot get TorchAir: the disk is full")),
    ],
    ids=["disk-full", "as-a-column-says-it", "quota-under-a-wrapper", "setup-under-a-wrapper"],
)
def test_a_failure_of_the_machine_is_setup_and_never_kept(lib, raised):
    FAIL[lib.cells[0].id] = raised
    first = _run(lib)[0]
    assert (first.status, first.layer) == ("error", "setup"), first.describe()
    _run(lib)
    assert RAN == [lib.cells[0].id]


def test_an_unwritable_cache_warns_once_and_the_run_goes_on(lib, capsys):
    (lib.project / cell_cache.DIR_NAME).write_text("a file where the cache would go")
    results = _run(lib)
    assert [r.status for r in results] == ["pass"] * 4
    err = capsys.readouterr().err
    assert err.count("cannot write the cell cache") == 1, err


def test_the_cache_can_be_turned_off_from_the_environment(monkeypatch):
    monkeypatch.setenv(cell_cache.ENV_OFF, "1")
    assert not cell_cache.enabled()
    monkeypatch.setenv(cell_cache.ENV_OFF, "0")
    assert cell_cache.enabled()


def test_the_cache_lives_in_the_project_or_the_current_directory(tmp_path, monkeypatch):
    import sysconfig

    project = SimpleNamespace(__file__=str(tmp_path / "proj" / "pkg" / "__init__.py"), __path__=[])
    module = SimpleNamespace(__file__=str(tmp_path / "lib.py"))
    installed = SimpleNamespace(
        __file__=str(Path(sysconfig.get_path("purelib")) / "pkg" / "__init__.py"), __path__=[]
    )
    monkeypatch.chdir(tmp_path)
    assert cell_cache.directory(project) == tmp_path / "proj" / cell_cache.DIR_NAME
    assert cell_cache.directory(module) == tmp_path / cell_cache.DIR_NAME
    assert cell_cache.directory(installed) == tmp_path / cell_cache.DIR_NAME
    namespace = SimpleNamespace(__file__=None, __path__=[])  # a package without __init__.py
    assert cell_cache.directory(namespace) == tmp_path / cell_cache.DIR_NAME


def test_a_run_end_callback_outside_a_run_is_an_error_naming_one_run():
    with pytest.raises(RuntimeError, match=r"outside a run: call it inside one_run\(\)"):
        run_scope.at_end(lambda: None)


def test_a_context_verdict_runs_the_op_alone_once_and_then_reads_it_from_the_cache(lib):
    """A failing context cell says how the op did alone; a run without the plain cell
    (``-k``, ``--last-failed``) runs it once and caches it, unreported; a later run reads
    it from the cache, even one that serves no cached cell (``--last-failed``'s)."""
    plain = lib.cells[0]
    in_context = replace(plain, context="chain")
    FAIL[in_context.id] = CellFailure("fake", "wrong strides")
    says = "in context chain (the op alone passes counting-static: a bug only this context shows)"
    [first] = _run(lib, [in_context])
    assert RAN == [in_context.id, plain.id] and first.message.startswith(says)
    [again] = _run(lib, [in_context], reuse=False)
    assert RAN == [in_context.id] and again.message.startswith(says)
    cache = CellCache(lib.module, lib.ops)
    assert cache.durations([plain]) == {}  # the verdict's run is no cell of the matrix
