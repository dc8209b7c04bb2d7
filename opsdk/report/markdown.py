"""`opsdk check --markdown FILE`: the matrix as Markdown, for CI logs and job summaries.

One table row per op, one column per cell (``ge-dynamic``, as cell ids name
it), then each failing cell with its layer and full message, each waived cell
with its waiver's reason, and what third-party code warned in each cell. GitHub
renders it in the job summary: with ``$GITHUB_STEP_SUMMARY`` set, the same text
is appended there.
"""

from __future__ import annotations

import os
from pathlib import Path

from opsdk.harness.model import Result
from opsdk.report import grid, problems, summary

_MARKS = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "error": "💥 error",
    "skip": "skip",
    "xfail": "xfail",
    "not run": "⏹ not run",
}


def _escape(text: str) -> str:
    """Table cells are one line and must not close the cell early."""
    return text.replace("|", "\\|").replace("\n", " ")


def _cell(result: Result | None) -> str:
    if result is None:
        return "-"
    mark = _MARKS[result.status]
    if result.stale_waiver:
        mark += " (stale waiver)"
    if result.cached:
        mark += " (cached)"
    return f"{mark} `{result.layer}`" if result.layer else mark


def _block(text: str) -> str:
    """``text`` fenced, indented under its list item."""
    fence = "```"
    body = "\n".join(f"  {line}" for line in text.splitlines())
    return f"\n\n  {fence}text\n{body}\n  {fence}"


def _entry(result: Result) -> str:
    """A cell's details: outcome, waiver, message and warnings."""
    where = f" in layer `{result.layer}`" if result.layer else ""
    waived = f"; waived: {_escape(result.waiver)}" if result.status == "xfail" else ""
    cached = " (cached)" if result.cached else ""
    text = f"- **{_escape(result.op)} [{result.label}]**{cached}: {result.status}"
    text += where + waived
    if result.message:
        text += _block(result.message)
    if result.warnings:
        text += "\n\n  Warnings:" + _block("\n".join(result.warnings))
    return text


def render(results: list[Result]) -> str:
    ops, backends, shapes, cell = grid(results)
    columns = [(b, m) for b in backends for m in shapes]
    lines = [
        f"## opsdk conformance: {summary(results)}",
        "",
        "| op | " + " | ".join(f"{b}-{m}" for b, m in columns) + " |",
        "| --- |" + " --- |" * len(columns),
    ]
    for op in ops:
        marks = [_cell(cell.get((op, b, m))) for b, m in columns]
        lines.append(f"| {_escape(op)} | " + " | ".join(marks) + " |")
    failing = problems(results)
    waived = [r for r in results if r.status == "xfail"]
    warned = [r for r in results if r.warnings and r not in failing and r not in waived]
    for title, listed in (
        ("Failing cells", failing),
        ("Waived cells (xfail)", waived),
        ("Cells that warned", warned),
    ):
        if listed:
            lines += ["", f"### {title}", ""]
            lines += [_entry(r) for r in listed]
    return "\n".join(lines) + "\n"


def write(path: Path, results: list[Result]) -> list[Path]:
    """Write ``path``, and append to the GitHub job summary when there is one;
    returns the files written."""
    text = render(results)
    Path(path).write_text(text)
    written = [Path(path)]
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as out:
            out.write(text + "\n")
        written.append(Path(step_summary))
    return written
