"""An audit's matrix: one cell per op, check and shape mode, run as ``opsdk check`` runs
its cells (waivers applied, cached results served, progress reported, interrupts heard).

A cell is a harness :class:`~opsdk.harness.cell.Cell` whose column is the check's name,
so the reports, the shard plan and ``opsdk report merge`` read an audit as they read a
check. A check's finding is a ``fail`` in its layer; what it cannot decide for the op
(no case, no case the Meta function takes) is a ``skip`` saying why (``not audited``,
never a pass); a note on a check that ran is the message of its ``pass``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from opsdk._runtime import spec
from opsdk._runtime.patches import guard_profiling_skipped
from opsdk.audit import AUDIT_SUITE, REGISTRY, check_named, search
from opsdk.audit.checks import Undecided
from opsdk.audit.model import BY_REGISTRY
from opsdk.harness import columns, not_run
from opsdk.harness.cell import Cell, CellFailure, OpUnderTest, Result
from opsdk.harness.failures import as_failure, raise_out_of_memory
from opsdk.harness.run import cache as cell_cache
from opsdk.harness.run import fingerprint, waivers
from opsdk.harness.run.heard import Heard
from opsdk.harness.variants.cases import values_unread

__all__ = [
    "NOT_AUDITED",
    "AuditCache",
    "cached",
    "cells",
    "left_out",
    "not_audited",
    "provenance",
    "run",
]

NOT_AUDITED = "not audited: "  # how a skip's message starts


def cells(library, checks=None, shapes=(), pattern: str | None = None, waived=()) -> list[Cell]:
    """The matrix: each op (whose name contains ``pattern``) × each of ``checks`` × each
    of ``shapes`` the check runs in, in library order; ``waived`` are the run's waivers.
    ``checks`` None: every check, each where the op's graph mode asks for it."""
    asked = checks is not None
    checks = checks if asked else columns.names(AUDIT_SUITE)
    found = []
    for audit_op in library.ops:
        if pattern and pattern not in audit_op.qualname:
            continue
        op = OpUnderTest(audit_op.spec or spec.of(audit_op.op), library.name)
        for check in checks:
            judge = check_named(check)
            if (
                not judge.applies(library)
                or _lacks(audit_op, judge, asked)
                or (audit_op.op is None and check != REGISTRY)
            ):
                continue
            for mode in (m for m in shapes if m in judge.shape_modes):
                reason = waivers.reason_for(waived, op, check, mode)
                found.append(Cell(op, check, mode, waiver=reason))
    return found


def _lacks(audit_op, judge, asked: bool = True) -> bool:
    """Whether ``audit_op`` has no cells of ``judge`` (``asked``: named by --checks)."""
    if judge.needs is not None and getattr(audit_op, judge.needs) is None:
        return True
    return not asked and judge.unless is not None and getattr(audit_op, judge.unless) is not None


def left_out(library, checks=None, pattern: str | None = None) -> list[str]:
    """One line per piece some ops lack, naming the checks that laid out no cell for
    them (an op without a converter has no converter cells: said once, not per cell);
    ``checks`` as :func:`cells` takes them."""
    lacking: dict[str, tuple[list[str], list[str]]] = {}
    ops = [op for op in library.ops if not pattern or pattern in op.qualname]
    for check in checks if checks is not None else columns.names(AUDIT_SUITE):
        judge = check_named(check)
        if not judge.needs:
            continue
        without = [op.qualname for op in ops if _lacks(op, judge)]
        if without and judge.applies(library):
            lacking.setdefault(judge.needs, ([], without))[0].append(check)
    lines = []
    for needs, (names, without) in lacking.items():
        whose = (
            f"no op of {library.name} has a TorchAir {needs}"
            if len(without) == len(ops)
            else f"{len(without)} of {len(ops)} ops have no TorchAir {needs} ({', '.join(without)})"
        )
        lines.append(
            f"{', '.join(names)}: not laid out: {whose}; such an op takes graph mode "
            "through npugraph_ex, which needs its fake function only (the npugraph_ex check)"
        )
    return lines


def _run(library, audit_op, cell: Cell, registered: bool) -> Result:
    """The cell's result; ``registered``: the op's registry cell is in this run (else a
    reason that cites its finding says the finding itself)."""
    start = time.perf_counter()
    judge = check_named(cell.column)
    check = judge.checker()
    status, layer, message = "pass", None, ""
    heard = Heard()
    # Dynamo's guard timing proves nothing about an op (see _runtime.patches): a third of
    # a one-op compile, in the fake and npugraph_ex checks' every compile
    with heard.warnings(), heard.logs(), guard_profiling_skipped():
        try:
            if audit_op.unchecked and cell.column != REGISTRY:
                raise Undecided(audit_op.unchecked)
            _searched(audit_op)
            notes = check.check(library, audit_op, cell.shapes)
            if audit_op.origin != "declared" and cell.column != "schema":
                notes = [_derived(audit_op), *notes]
            message = "; ".join(f"note: {n}" for n in dict.fromkeys(notes))
        except CellFailure as failure:
            status, layer, message = "fail", failure.layer, str(failure)
        except Undecided as undecided:
            said = str(undecided)
            if said.endswith(BY_REGISTRY) and not registered:  # the finding is nowhere else
                finding = "; ".join(audit_op.findings)
                said = f"{said.removesuffix(BY_REGISTRY)}; the registry check finds: {finding}"
            status, message = "skip", NOT_AUDITED + said
        except Exception as err:  # noqa: BLE001 - one op's crash must not end the audit
            raise_out_of_memory(err)  # the process's, not the cell's
            crash = as_failure(err, default_layer=judge.error_layer)
            status, layer, message = "error", crash.layer, f"opsdk could not check: {crash}"
    seconds = round(time.perf_counter() - start, 4)
    return cell.result(status, layer, message, seconds=seconds, warnings=heard.lines)


def _searched(audit_op) -> None:
    """A first case the Meta function refuses goes through the search, once."""
    if audit_op.cases and audit_op.meta and not audit_op.searched:
        audit_op.searched = True
        if search.search(audit_op, audit_op.meta.path):
            if audit_op.origin == "declared":
                audit_op.left = "the Meta function refuses TorchAir's first declared case"
            audit_op.origin = "searched"


def _derived(audit_op) -> str:
    left = f" ({audit_op.left})" if audit_op.left else ""
    how = {
        "defined": "derived from the dtype rows of its CANN definition (--ir)",
        "derived": "derived from the schema",
        "searched": "changed until the Meta function took it",
    }[audit_op.origin]
    return (
        f"the case is {how}: its converter declares none that opsdk runs (TorchAir's "
        f"declare_supported; an opsdk package's specs.py){left}"
    )


def run(
    library,
    cell_list: list[Cell],
    cache: AuditCache | None = None,
    on_start: Callable[[Cell], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[Result]:
    """Every cell's result, in order; cells a ``stop`` left are ``not run``."""
    by_name = {a.qualname: a for a in library.ops}
    registered = {c.op.name for c in cell_list if c.column == REGISTRY}
    with values_unread():  # the checks read shapes and dtypes, never values
        results = _each(library, by_name, registered, cell_list, cache, on_start, on_result, stop)
    return results + [not_run(c) for c in cell_list[len(results) :]]


def _each(
    library, by_name, registered, cell_list, cache, on_start, on_result, stop
) -> list[Result]:
    results = []
    for cell in cell_list:
        if stop is not None and stop():
            break
        if on_start:
            on_start(cell)
        result = cache.get(cell) if cache is not None else None
        if result is None:
            try:
                result = _run(library, by_name[cell.op.name], cell, cell.op.name in registered)
            except KeyboardInterrupt:
                if stop is None:
                    raise
                result = not_run(cell, "aborted by an interrupt")
            if cache is not None:
                cache.put(cell, result)
        result = waivers.apply(result, cell.waiver)
        if cache is not None and result.status != "not run":
            cache.remember(result)
        results.append(result)
        if on_result:
            on_result(result)
        if result.status == "not run":
            break
    return results


class AuditCache(cell_cache.CellCache):
    """The cell cache of an audit, in ``.opsdk_cache/`` of the current directory: a cell's
    key digests the library's sources (``Library.sources``), opsdk and the platform
    (:func:`opsdk.harness.run.fingerprint.versions`) and the cell. An audit's skip is kept
    too: it says what the library's own code lacks (a case), as a finding does."""

    def __init__(self, library, reuse: bool = True):
        self.root = Path.cwd() / cell_cache.DIR_NAME
        self.reuse = reuse
        self.rerun = None  # an audit draws no pictures: every kept result is served
        self._library = library.sources
        self._unwritable = None

    def key(self, cell: Cell) -> str:
        parts = {
            "audit": self._library,
            "versions": fingerprint.versions(),
            "cell": cell.id,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def unchanged(self, cell: Cell) -> bool:
        """Always: the library's sources are digested once, as it loads."""
        return True

    def keeps(self, result: Result) -> bool:
        return cell_cache.cacheable(result) or (
            result.status == "skip" and result.message.startswith(NOT_AUDITED)
        )


def provenance(library, shard) -> dict:
    """What an audit's report records so that only shards of one audit are merged
    (:mod:`opsdk.report.merge`)."""
    return {
        "package": {"name": library.name, "sources": library.sources},
        "versions": fingerprint.versions(),
        "shard": shard.to_json() if shard else None,
    }


def cached(cell_list: list[Cell], cache: AuditCache) -> list[Result] | None:
    """The cells' results, waivers applied, when ``cache`` holds every one, else None
    (``--isolate`` starts no process for such an op)."""
    found = [result for cell in cell_list if (result := cache.get(cell)) is not None]
    if len(found) < len(cell_list):
        return None
    return [waivers.apply(r, c.waiver) for c, r in zip(cell_list, found, strict=True)]


def not_audited(results: list[Result]) -> dict[str, str]:
    """The ops no check could run a case of, with the first reason: an op is audited when
    one of its fake, converter, infer, ascendc or npugraph_ex cells ran (the registry's, where no
    such cell was asked for); the schema's read the schema alone."""
    traced = {r.op for r in results if r.column not in ("schema", REGISTRY)}
    ran: set[str] = set()
    why: dict[str, str] = {}
    for r in results:
        if r.column == "schema" or r.status == "not run":
            continue
        if r.column == REGISTRY and r.op in traced:
            continue
        if r.status in ("pass", "fail", "xfail"):
            ran.add(r.op)
        else:
            why.setdefault(r.op, r.message.removeprefix(NOT_AUDITED))
    return {op: reason for op, reason in why.items() if op not in ran}
