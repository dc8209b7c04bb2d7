"""The cell cache: a cell whose inputs have not changed since it last ran is not run again.

A cell's key digests everything its result depends on: the op's sources
(:func:`opsdk.harness.run.fingerprint.op_sources`), opsdk's version and own files, the
versions of Python, torch, torch_npu and TorchAir, the cell (op, backend, shape mode,
context, profile) and the columns of the run it leaves work to (``opcheck`` leaves its
AOT tests to ``aot_eager``). A cached result is reported as such (``Result.cached``).

The sources in a key are those the run's code came from: read as the cache is made, right
after the package's import, and read again after each cell ran. A cell imports modules
of the op too (converter.py is imported in the first compiled cell), so an edit during
the run can make its code a mix of both versions: once the op's sources differ from
those the run started from, no result of the op is kept for the rest of the run, and a
notice says so. A file changed after the package's import began (by its ctime, which
nothing sets back) counts as such an edit too, where the import's start is known (``opsdk
check``; the pytest plugin and other callers of :class:`CellCache` read the sources
when they make it, after the import).

The cache lives in the op project, beside the package (``.opsdk_cache/``, which ignores
itself for git, as ``.pytest_cache/`` does; for a package installed in site-packages, in
the current directory); ``opsdk check`` and the pytest plugin share it. One file per
entry, written atomically (a temporary file renamed over it), so concurrent runs (xdist
workers, two shells) never see half an entry; an entry that does not read back as the
result of its own cell is ignored and written again.

Only results that say something about the op are kept: pass, and failures outside the
``setup`` layer (what this machine cannot run or lacks, a full disk included:
:func:`opsdk.harness.failures.machine_failure`) and ``process`` (a crash or a timeout,
which may not recur). Skips are never kept; waivers are applied as results are read, so
editing ``opsdk-waivers.toml`` reruns nothing. Besides results, each cell's last outcome
and duration are kept under its id, for ``--last-failed`` and for balancing shards.
``OPSDK_NO_CACHE=1`` turns the cache off, as ``--no-cache`` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from opsdk.harness.cell import Cell, OpUnderTest, Result
from opsdk.harness.core import run_scope
from opsdk.harness.run import fingerprint

__all__ = ["DIR_NAME", "ENV_OFF", "CellCache", "cacheable", "directory", "enabled", "failed"]

DIR_NAME = ".opsdk_cache"
ENV_OFF = "OPSDK_NO_CACHE"
_FORMAT = "1"  # bumped when an entry's layout changes
_GITIGNORE = "# Created by opsdk: the cell cache is local to this checkout.\n*\n"


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")


def directory(package: ModuleType) -> Path:
    """Beside the op package, in its project (where pyproject.toml is); for a module that is
    no package, beside the module; for one installed in site-packages or with no file
    (a namespace package), in the current directory."""
    if package.__file__ is None:
        return Path.cwd() / DIR_NAME
    file = Path(package.__file__).resolve()
    home = file.parent.parent if hasattr(package, "__path__") else file.parent
    installed = {Path(sysconfig.get_path(name)).resolve() for name in ("purelib", "platlib")}
    return (Path.cwd() if home in installed else home) / DIR_NAME


def cacheable(result: Result) -> bool:
    """Whether ``result`` says something about the op that running it again would repeat."""
    return result.status in ("pass", "fail", "error") and result.layer not in ("setup", "process")


def failed(result: Result) -> bool:
    """What ``--last-failed`` runs again: failures, errors and stale waivers."""
    return result.status in ("fail", "error") or result.stale_waiver


def _on_stderr(text: str) -> None:
    print(text, file=sys.stderr)


class CellCache:
    """The cache of one op package's cells. ``reuse=False`` records results without
    serving any (``--dump`` wants its graphs, ``--last-failed`` its failures run again);
    ``rerun(result)`` names results it holds but does not serve (cells whose pictures a
    report draws); ``imported_at`` is when the package's import began, where the caller
    knows (``opsdk check``). ``say`` is where its notices go: a line of stderr, unless a run
    points it at its progress lines (:meth:`opsdk.harness.run.progress.Progress.notice`)."""

    say: Callable[[str], None] = staticmethod(_on_stderr)

    def __init__(
        self,
        package: ModuleType,
        ops: list[OpUnderTest],
        reuse: bool = True,
        rerun: Callable[[Result], bool] | None = None,
        imported_at: int | None = None,
    ):
        self.root = directory(package)
        self.reuse = reuse
        self.rerun = rerun
        self._tracked = fingerprint.Sources(package, ops)
        # The sources as the run found them, after the package's import: what its code came
        # from, the key of every cell it runs; and the ops whose sources changed since.
        self._sources = self._tracked.read()
        self._changed: set[str] = set()
        # When the package's import began (time.time_ns()), if known: a file changed since
        # may have been imported as it was before the sources were read (checked once).
        self._imported_at = imported_at
        self._unwritable: str | None = None

    # Keys ------------------------------------------------------------------------------

    def key(self, cell: Cell) -> str:
        parts = {
            "format": _FORMAT,
            "versions": fingerprint.versions(),
            "sources": self._sources.digests.get(cell.op.name),
            "op": cell.op.name,
            "cell": cell.label,
            "left_to": run_scope.left_to(cell.column),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    # Results ---------------------------------------------------------------------------

    def get(self, cell: Cell) -> Result | None:
        """The cell's cached result to serve, marked cached; None when there is none to
        trust or the cache serves none (``reuse=False``, or not this one: ``rerun``)."""
        result = self.read(cell) if self.reuse else None
        return None if result is not None and self.rerun and self.rerun(result) else result

    def read(self, cell: Cell) -> Result | None:
        """The cell's cached result, marked cached, whether or not the cache serves it."""
        key = self.key(cell)
        entry = self._read(self._entry(key))
        try:
            result = Result.from_json(entry["result"])
            trusted = entry["key"] == key and result.op == cell.op.name
            trusted = trusted and result.label == cell.label and self.keeps(result)
        except (KeyError, TypeError, ValueError):  # not an entry this opsdk wrote
            return None
        return replace(result, cached=True) if trusted else None

    def put(self, cell: Cell, result: Result) -> None:
        """Keep ``result`` (unwaived, as the cell produced it) when it is worth keeping and
        the op's sources are still those the run started from: otherwise its code may be
        of either (a module imported in the cell, as converter.py is in the first compiled
        cell, is read as it is then), and neither its nor any later result of the op is
        kept (:meth:`unchanged`)."""
        if self.keeps(result) and not result.cached and self.unchanged(cell):
            key = self.key(cell)
            self._write(self._entry(key), {"key": key, "result": result.to_json()})

    def unchanged(self, cell: Cell) -> bool:
        """Whether the sources of ``cell``'s op are as the run found them, after the cell
        ran. Once an op's are not, they count as changed for the rest of the run, even
        edited back: its modules may hold code of either. Says so once per change seen."""
        if cell.op.name in self._changed:
            return False
        now = self._tracked.read()
        changed = {
            op for op, sources in now.digests.items() if sources != self._sources.digests[op]
        }
        edited = now.edited(self._sources)
        if self._imported_at is not None:
            late = fingerprint.changed_since(self._sources.files, self._imported_at)
            self._imported_at = None
            if late:  # which op's code they are is not known: all of them
                changed, edited = set(now.digests), sorted({*edited, *late})
        if changed - self._changed:
            self._changed |= changed
            self.say(
                f"opsdk: {', '.join(map(str, edited))} changed during the run (seen after "
                f"{cell.op.name} [{cell.label}]): no result of {', '.join(sorted(changed))} "
                "from there on is cached; run again to check the code as it is now"
            )
        return cell.op.name not in self._changed

    def keeps(self, result: Result) -> bool:
        """Whether ``result`` is worth keeping (:func:`cacheable`)."""
        return cacheable(result)

    # Last outcomes ---------------------------------------------------------------------

    def remember(self, result: Result) -> None:
        """The cell's last outcome (waiver applied) and how long it took to run; a file
        already saying so is left as it is (a cached result's, in a rerun)."""
        record = {"id": result.id, "failed": failed(result), "seconds": result.seconds}
        path = self._last(result.id)
        if self._read(path) != record:
            self._write(path, record)

    def last_failed(self, cells: list[Cell]) -> list[Cell]:
        """Those of ``cells`` whose last outcome was a failure."""
        return [c for c in cells if self._read(self._last(c.id)).get("failed") is True]

    def durations(self, cells: list[Cell]) -> dict[str, float]:
        """The seconds each of ``cells`` took when it last ran, by cell id, where known."""
        found = {}
        for cell in cells:
            seconds = self._read(self._last(cell.id)).get("seconds")
            if isinstance(seconds, (int, float)) and seconds >= 0:
                found[cell.id] = float(seconds)
        return found

    # Files -----------------------------------------------------------------------------

    def _entry(self, key: str) -> Path:
        return self.root / f"v{_FORMAT}" / "cells" / key[:2] / f"{key}.json"

    def _last(self, cell_id: str) -> Path:
        name = hashlib.sha256(cell_id.encode()).hexdigest()
        return self.root / f"v{_FORMAT}" / "last" / f"{name}.json"

    @staticmethod
    def _read(path: Path) -> dict:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):  # missing, unreadable or corrupt: not trusted
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, path: Path, data: dict) -> None:
        if self._unwritable is not None:
            return
        try:
            if not self.root.is_dir():
                self.root.mkdir(parents=True, exist_ok=True)
                (self.root / ".gitignore").write_text(_GITIGNORE)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as out:
                    json.dump(data, out)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as err:
            self._unwritable = f"cannot write the cell cache at {self.root} ({err})"
            self.say(f"opsdk: {self._unwritable}: results are not cached")
