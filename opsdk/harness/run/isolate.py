"""`opsdk check --isolate`: each op in its own process, with a time limit.

A kernel that segfaults, aborts or hangs takes its process down; run in a child
per op (watched, :mod:`opsdk.harness.run.watch`), it costs the cell it happened in,
reported as an error with the signal or the time limit and where; the op's other
cells run in a new process, and the other ops in theirs. The child runs in its own
session and gets Ctrl-C and SIGTERM as forwarded by :mod:`opsdk.harness.run.interrupts`,
so it stops as the parent does, report written.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from opsdk.harness.cell import Cell, Result
from opsdk.harness.run import interrupts, journal, watch


def check_in_child(
    targets: tuple[str, ...],
    cells: list[Cell],
    selection,
    timeout: float,
    dump_dir=None,
    command="check",
    cell_timeout: float | None = None,
):
    """Check one op's ``cells`` of ``targets`` in a child `opsdk check --only-op` (`opsdk
    audit` for ``command="audit"``) given the ``selection`` flags that lay them out (``--column
    ...``), within ``timeout`` seconds in all and ``cell_timeout`` a cell. The cells a
    child finished keep their results; a crash, a hang or the time limit is the error
    of the cell it happened in; cells a stop left are ``not run``."""
    op = cells[0].op.name
    with tempfile.TemporaryDirectory(prefix="opsdk-isolate-") as scratch:
        report = Path(scratch) / "report.json"
        args = [command, *targets, "--only-op", op, *selection, "--json", str(report)]
        if dump_dir is not None:
            args += ["--dump", str(dump_dir)]
        with open(Path(scratch) / "out", "w") as out, open(Path(scratch) / "err", "w+") as err:
            ended = watch.rerun(args, Path(scratch), cell_timeout, timeout, stdout=out, stderr=err)
            err.seek(0)
            last = (err.read().strip().splitlines() or [""])[-1]
        if ended.record.done and report.exists():
            return [Result.from_json(r) for r in json.loads(report.read_text())["results"]]
    return _salvaged(cells, ended, last)


def _salvaged(cells: list[Cell], ended: watch.Ended, last: str) -> list[Result]:
    """The op's results from a child that wrote no report: what its journal holds, the
    cell it died in as an error, the cells after it errors (or ``not run`` after a stop)."""
    from opsdk.harness.run import waivers

    record = ended.record
    finished, _ = journal.settled(record, cells)
    death = record.deaths[-1] if record.deaths else None
    why = ended.how or f"exited with code {ended.returncode} without a report"
    said = f" ({last})" if last and not ended.how else ""
    results = []
    for cell in cells:
        if cell.id in finished:
            results.append(finished[cell.id])
        elif interrupts.requested():
            results.append(cell.result("not run", waiver=cell.waiver))
        else:
            where = f" in {death['cell']}" if death else ""
            message = f"not run: the op's process {why}{where}{said}"
            results.append(waivers.apply(cell.result("error", "process", message), cell.waiver))
    return results
