"""Reports of a conformance run: the JSON file and the terminal matrix."""

from __future__ import annotations

import json
import platform
import re
import shlex
import shutil
import sys
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from opsdk import _streams, _versions
from opsdk._runtime.device import choose
from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns

if TYPE_CHECKING:  # the results' module imports torch, which `opsdk doctor` does not need
    from opsdk.harness.cell import Result

__all__ = [
    "AUDIT_TITLE",
    "CHECK_TITLE",
    "Grid",
    "environment",
    "grid",
    "json_report",
    "matrix",
    "problems",
    "run_info",
    "succeeded",
    "summary",
]

# Distinct from the shape modes' s/d/m column heads; "not run" is in the legend only
# when an interrupted run has such cells.
_MARKS = {"pass": "✓", "fail": "F", "error": "E", "skip": "-", "xfail": "x", "not run": "·"}
# Where stdout cannot show those (PYTHONIOENCODING=ascii): pytest's mark for a pass.
_ASCII_MARKS = _MARKS | {"pass": ".", "not run": "?"}
_PIPED_WIDTH = 100  # the matrix's width when stdout is no terminal (a CI log, a file)
CHECK_TITLE = "opsdk conformance"  # the title of `opsdk check`'s reports
AUDIT_TITLE = "opsdk audit"  # the title of `opsdk audit`'s reports
_WARNING_WIDTH = 100  # the terminal shows a warning's first line, cut to this; reports in full
_SAID_ONCE = 80  # characters of a failure's closing clauses the terminal says once, then refers to
_CLAUSE = re.compile(r"[:;] ")  # where a message's clauses start (the fix is the last ones)


def run_info(target: str, title: str = CHECK_TITLE) -> dict:
    """How and when the run was made: what a report's reader needs to rerun it, and what
    its reports are titled (a check's conformance or an audit)."""
    return {
        "title": title,
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "target": target,
        "command": shlex.join(["opsdk", *sys.argv[1:]]),
    }


def environment(column_names=()) -> dict:
    """What the results were produced on: enough to reproduce or compare runs, with
    what each column of ``column_names`` says of itself. Versions come from the installed
    metadata and nothing is set up, so ``opsdk doctor`` imports torch only to try an
    installed torch_npu."""
    npu = choose()
    from opsdk._runtime.locator import locate

    torchair = locate()
    return {
        "opsdk": _versions.opsdk_version(),
        "torch": _versions.torch_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "npu": npu.kind,
        "npu_reason": npu.reason,
        "torch_npu": npu.torch_npu_version,
        "torchair": f"{torchair.mode} ({torchair.source or 'not fetched'}) at {torchair.path}",
        "ge_execution": "CANN" if npu.real else "opsdk GE reference executor (offline)",
    } | {
        key: value
        for name in columns.names()
        if name in column_names
        for key, value in columns.column(name).environment().items()
    }


def json_report(
    results: list[Result],
    run: dict | None = None,
    provenance: dict | None = None,
    env: dict | None = None,
) -> str:
    """The ``--json`` report; ``provenance`` adds what merging shards checks (package,
    versions, shard: see :func:`opsdk.report.merge.provenance`), ``env`` the environment
    when it is not this process's (a merge of other machines' reports)."""
    payload = {
        "run": run or {},
        "environment": env or environment({r.column for r in results}),
        **(provenance or {}),
        "summary": dict(Counter(r.status for r in results)),
        "results": [r.to_json() for r in results],
    }
    return json.dumps(payload, indent=2) + "\n"


class Grid(NamedTuple):
    """The matrix's axes as the results fill them, in run order; every renderer uses it."""

    ops: list[str]
    columns: list[str]  # backends, and their profile/context variants (Result.variant)
    shapes: list[str]
    cell: dict[tuple[str, str, str], Result]  # (op, column, shapes) -> result


def grid(results: list[Result]) -> Grid:
    return Grid(
        list(dict.fromkeys(r.op for r in results)),
        list(dict.fromkeys(r.variant for r in results)),
        [m for m in SHAPE_MODES if any(r.shapes == m for r in results)],
        {(r.op, r.variant, r.shapes): r for r in results},
    )


def problems(results: list[Result]) -> list[Result]:
    """What a reader must act on: failures, errors and stale waivers."""
    return [r for r in results if r.status in ("fail", "error") or r.stale_waiver]


def summary(results: list[Result]) -> str:
    """``40 pass, 2 fail``: the counts, in a fixed order, and ``(30 cached)`` when the cell
    cache served some; an interrupted run says how far it got (``interrupted after 7/15
    cells: 7 pass, 8 not run``); stale waivers, which fail a run whose cells all pass, are
    named with what to do about them."""
    counts = Counter(r.status for r in results)
    text = ", ".join(f"{counts[k]} {k}" for k in _MARKS if counts[k]) or "no cells ran"
    if counts["not run"]:
        done = len(results) - counts["not run"]
        text = f"interrupted after {done}/{len(results)} cells: {text}"
    cached = sum(r.cached for r in results)
    if cached:
        text += f" ({cached} cached)"
    stale = sum(r.stale_waiver for r in results)
    if stale:
        from opsdk.harness.run.waivers import FILE_NAME as WAIVERS_FILE  # imports torch

        text += (
            f"; {stale} stale waiver{'s' if stale > 1 else ''}: "
            f"remove {'them' if stale > 1 else 'it'} from {WAIVERS_FILE}"
        )
    return text


def succeeded(results: list[Result]) -> bool:
    """The run's verdict (exit 0): no cell failed, and no waiver is stale, or nobody
    would notice it and remove it."""
    return all(r.status in ("pass", "skip", "xfail") and not r.stale_waiver for r in results)


def _clip(line: str) -> str:
    """A warning's line cut in its middle, so that the terminal keeps both what it says
    and where it ends (a reason's file:line is at its end)."""
    if len(line) <= _WARNING_WIDTH:
        return line
    kept = _WARNING_WIDTH - 1
    return line[: kept - kept // 3] + "…" + line[len(line) - kept // 3 :]


def _warnings(results: list[Result]) -> list[str]:
    """Each op's cells that warned, those with the same warnings on one line, each
    warning under them on one line of its own."""
    groups: dict[tuple[str, tuple[str, ...]], list[Result]] = {}
    for r in results:
        if r.warnings:
            groups.setdefault((r.op, r.warnings), []).append(r)
    lines = []
    for (op, warned), cells in groups.items():
        lines.append(f"{op} " + " ".join(f"[{r.label}]" for r in cells))
        skipped = {r.message for r in cells if r.status == "skip" and r.message}
        lines += [f"  {_shown(w, skipped)}" for w in warned]
    return lines


def _shown(warning: str, skipped: set[str]) -> str:
    """A warning's first line as the terminal shows it: whole when it says why its cells
    were not run (their skip's reason: what the user acts on), else clipped."""
    line = warning.splitlines()[0] if warning else ""
    return line if any(reason in line for reason in skipped) else _clip(line)


def _said_once(failed: list[Result]) -> list[str]:
    """Each failure's line, with closing clauses of at least :data:`_SAID_ONCE` characters
    that an earlier line said (the same defect's why and fix, op after op) referring to
    that line instead; the reports keep every message whole."""
    first: dict[str, str] = {}  # a closing text -> the cell that said it first
    lines = []
    for r in failed:
        line = r.describe()
        cuts = [m.end() for m in _CLAUSE.finditer(line)]
        tails = [line[c:] for c in cuts if len(line) - c >= _SAID_ONCE]
        said = next((t for t in tails if t in first), None)
        for tail in tails:
            first.setdefault(tail, f"{r.op} [{r.label}]")
        said_above = said and line[: len(line) - len(said)] + f"as for {first[said]} above"
        lines.append(said_above or line)
    return lines


def _terminal_width() -> int:
    return shutil.get_terminal_size((_PIPED_WIDTH, 24)).columns


def _table(ops, backends, shapes, status, width: int, marks: dict[str, str]) -> list[str]:
    """The matrix's rows: per backend a group of one column per shape mode, as many groups
    side by side as fit ``width`` (at least one), the rest in blocks below, each block with
    the op names again and its groups as wide as its widest."""
    name = max(len(o) for o in ops)
    modes = " ".join(m[0] for m in shapes)
    blocks: list[list[str]] = []
    for b in backends:
        if blocks and name + (len(blocks[-1]) + 1) * (_group(modes, *blocks[-1], b) + 1) <= width:
            blocks[-1].append(b)
        else:
            blocks.append([b])
    lines = []
    for block in blocks:
        group = _group(modes, *block)
        lines += [""] if lines else []
        lines.append(" ".join([" " * name] + [b.ljust(group) for b in block]).rstrip())
        lines.append(" ".join([" " * name] + [modes.ljust(group)] * len(block)).rstrip())
        for op in ops:
            row = [op.ljust(name)]
            for b in block:
                cells = [marks.get(status.get((op, b, m)), " ") for m in shapes]
                row.append(" ".join(cells).ljust(group))
            lines.append(" ".join(row).rstrip())
    return lines


def _group(modes: str, *columns: str) -> int:
    """The width of each column group of a block of ``columns``."""
    return max(len(modes), *(len(c) for c in columns))


def matrix(results: list[Result], width: int | None = None) -> str:
    """Ops as rows; per backend one column per shape mode (s/d/m), folded into blocks that
    fit ``width`` (default: the terminal's), in marks stdout can show; failures below, then
    what third-party code warned, under the cells it warned in."""
    if not results:
        return summary(results)
    ops, backends, shapes, cell = grid(results)
    status = {key: r.status for key, r in cell.items()}
    marks = _MARKS if _streams.shows("".join(_MARKS.values())) else _ASCII_MARKS
    lines = _table(ops, backends, shapes, status, width or _terminal_width(), marks)
    legend = ", ".join(
        f"{mark} {name}"
        for name, mark in marks.items()
        if name != "not run" or "not run" in status.values()
    )
    lines.append("(" + ", ".join(f"{m[0]} = {m}" for m in shapes) + "; " + legend + ")")
    if problems(results):
        lines.append("")
        lines += _said_once(problems(results))
    if any(r.warnings for r in results):
        lines += ["", "Warnings (in full in the --json, --report and --markdown files):"]
        lines += _warnings(results)
    lines.append("")
    lines.append(summary(results))
    return "\n".join(lines)
