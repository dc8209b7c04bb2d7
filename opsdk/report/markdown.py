"""`opsdk check --markdown FILE`: the matrix as Markdown, for CI logs and job summaries.

The table fits a GitHub Actions summary page without scrolling: one column per
backend, one row per op and variant (``ns::op``, then ``ns::op /view`` for a usage
context, ``ns::op +frozen_parameter`` for an option profile), and in each cell one
mark per shape mode (``✓✗-``: static, dynamic, mark_static), followed by the layers
that failed. Below it: each failing cell with its layer, full message and links to
the pictures of its graphs, each waived cell with its waiver's reason, and what
third-party code warned in each cell. With ``$GITHUB_STEP_SUMMARY`` set, the same
text is appended there. The JSON report keeps every cell as its own result.
"""

from __future__ import annotations

import os
from pathlib import Path

from opsdk.axes import SHAPE_MODES
from opsdk.harness.cell import Result
from opsdk.report import CHECK_TITLE, problems, summary
from opsdk.report.graphs import pictures as graph_pictures

_MARKS = {"pass": "✓", "fail": "✗", "error": "E", "skip": "-", "xfail": "x", "not run": "·"}


def _escape(text: str) -> str:
    """Table cells are one line and must not close the cell early."""
    return text.replace("|", "\\|").replace("\n", " ")


def _variant(result: Result) -> str:
    """The row of a result within its op: ``+profile`` and ``/context``, or nothing."""
    return result.variant.removeprefix(result.column)


def _cell(results: list[Result | None]) -> str:
    """One backend's cells of a row: a mark per shape mode, then what failed where."""
    if not any(results):
        return ""
    marks = "".join(_MARKS[r.status] if r else " " for r in results)
    notes = list(dict.fromkeys(r.layer for r in results if r and r.layer))
    notes += ["stale waiver"] * any(r.stale_waiver for r in results if r)
    return f"`{marks}`" + (" " + ", ".join(f"`{n}`" for n in notes) if notes else "")


def _table(results: list[Result]) -> list[str]:
    backends = list(dict.fromkeys(r.column for r in results))
    shapes = [m for m in SHAPE_MODES if any(r.shapes == m for r in results)]
    rows = list(dict.fromkeys((r.op, _variant(r)) for r in results))
    by_cell = {(r.op, _variant(r), r.column, r.shapes): r for r in results}
    lines = ["| op | " + " | ".join(backends) + " |", "| --- |" + " --- |" * len(backends)]
    for op, variant in rows:
        marks = [_cell([by_cell.get((op, variant, b, m)) for m in shapes]) for b in backends]
        name = f"{op} {variant}" if variant else op
        lines.append(f"| {_escape(name)} | " + " | ".join(marks) + " |")
    legend = ", ".join(
        f"{mark} {status}"
        for status, mark in _MARKS.items()
        if status != "not run" or any(r.status == status for r in results)
    )
    lines += ["", f"Each cell: {', '.join(shapes)}, in that order ({legend})."]
    return lines


def _block(text: str) -> str:
    """``text`` fenced, indented under its list item."""
    fence = "```"
    body = "\n".join(f"  {line}" for line in text.splitlines())
    return f"\n\n  {fence}text\n{body}\n  {fence}"


def _links(result: Result, pictures: Path | None, base: Path) -> str:
    """Links to the pictures of the cell's graphs, relative to the report's folder."""
    found = graph_pictures.found(pictures, result.op, result.label)
    links = [
        f"[{graph_pictures.NAMES[kind]}{' (text)' if path.suffix == '.txt' else ''}]"
        f"({Path(os.path.relpath(path, base)).as_posix()})"
        for kind, path in found.items()
    ]
    return "\n\n  Graphs: " + ", ".join(links) if links else ""


def _entry(result: Result, pictures: Path | None = None, base: Path = Path(".")) -> str:
    """A cell's details: outcome, waiver, message, notes, warnings and its graphs' pictures."""
    where = f" in layer `{result.layer}`" if result.layer else ""
    waived = f"; waived: {_escape(result.waiver)}" if result.status == "xfail" else ""
    cached = " (cached)" if result.cached else ""
    text = f"- **{_escape(result.op)} [{result.label}]**{cached}: {result.status}"
    text += where + waived
    if result.message:
        text += _block(result.message)
    if result.notes:
        text += "\n\n  Notes:" + _block("\n".join(result.notes))
    if result.warnings:
        text += "\n\n  Warnings:" + _block("\n".join(result.warnings))
    return text + _links(result, pictures, base)


def render(
    results: list[Result],
    pictures: Path | None = None,
    base: Path = Path("."),
    title: str = CHECK_TITLE,
) -> str:
    """The report; ``pictures`` is the folder the cells' graphs were drawn in, linked
    relative to ``base`` (the report's folder)."""
    lines = [f"## {title}: {summary(results)}", "", *_table(results)]
    failing = problems(results)
    waived = [r for r in results if r.status == "xfail"]
    warned = [r for r in results if r.warnings and r not in failing and r not in waived]
    listed = failing + waived + warned
    found = graph_pictures.found
    drawn = [r for r in results if r not in listed and found(pictures, r.op, r.label)]
    for title, cells in (
        ("Failing cells", failing),
        ("Waived cells (xfail)", waived),
        ("Cells that warned", warned),
        ("Graphs of the other cells", drawn),
    ):
        if cells:
            lines += ["", f"### {title}", ""]
            lines += [_entry(r, pictures, base) for r in cells]
    return "\n".join(lines) + "\n"


def step_summary() -> Path | None:
    """The GitHub job summary the report is also appended to, when there is one."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(path) if path else None
