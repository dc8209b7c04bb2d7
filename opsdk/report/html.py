"""`opsdk check --report FILE.html`: the matrix as one self-contained page.

No scripts, styles inline, nothing fetched: the page opens from a CI artefact
store or a mail attachment. It heads with how, when and with what the run was
made; each matrix cell shows its outcome and duration, and a cell with more to
say links to its ``<details>`` below the matrix, at the page's full width: its
layer, message, waiver, warnings, the pictures of a ``ge``/``npugraph_ex`` cell's
graphs (inline SVG, collapsed: :mod:`opsdk.report.graphs`) and, when the run dumped
graphs, the dumps. Text wraps, long tokens included, and pictures shrink to the
page's width, so no detail makes the page scroll sideways; a matrix wider than the
window (every column on a phone) scrolls in its own box.
"""

from __future__ import annotations

import html
from pathlib import Path

from opsdk.harness.cell import Result, case_dir
from opsdk.harness.run.waivers import FILE_NAME as WAIVERS_FILE
from opsdk.report import CHECK_TITLE, grid, summary
from opsdk.report.graphs import pictures as graph_pictures
from opsdk.report.graphs.render import inline_svg

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}
div.matrix{overflow-x:auto}
table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f4f4f4}
td.pass{background:#e6f6e6}
td.fail,td.error{background:#fde8e8}
td.skip,td.xfail{background:#f6f3e0}
td.not-run{background:#eee;color:#666}
td small{color:#666}
th,td,dd,summary,p{overflow-wrap:anywhere}
details{margin:.4em 0}
details summary{cursor:pointer;font-weight:600}
details details{margin-left:1em}
details details summary{font-weight:400}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;background:#fafafa;padding:.5em}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1em}
dd{margin:0}
figure{margin:.5em 0}
figcaption{font-size:12px;color:#444}
figure svg{max-width:100%;height:auto}
"""
# What the page's head says of the environment (all of it is at the bottom).
_HEAD_ENVIRONMENT = ("opsdk", "torch", "torch_npu", "torchair", "ge_execution")


def _has_details(result: Result, dumps: dict[str, str], pictures: dict[str, Path]) -> bool:
    return bool(
        result.message or result.waiver or result.warnings or result.notes or dumps or pictures
    )


def _outcome(result: Result) -> str:
    where = f" in {result.layer}" if result.layer else ""
    return result.status + where + (" (cached)" if result.cached else "")


def _cell(result: Result | None, anchor: str | None) -> str:
    if result is None:
        return "<td>-</td>"
    label = html.escape(_outcome(result))
    if anchor:
        label = f'<a href="#{anchor}">{label}</a>'
    css = result.status.replace(" ", "-")
    return f'<td class="{css}">{label} <small>{result.seconds:.2f} s</small></td>'


def _figures(pictures: dict[str, Path]) -> str:
    """The cell's graphs, collapsed: each picture inline, or the text that stands in for
    it (its first line says why it was not drawn)."""
    parts = ["<details><summary>graphs</summary>"]
    for kind, path in pictures.items():
        caption = html.escape(graph_pictures.CAPTIONS[kind])
        drawn = path.read_text(encoding="utf-8")
        if path.suffix == ".svg":
            parts.append(f"<figure>{inline_svg(drawn)}<figcaption>{caption}")
        else:
            why, _, text = drawn.partition("\n")
            parts.append(f"<figure><p>{html.escape(why)}</p><pre>{html.escape(text)}</pre>")
            parts.append(f"<figcaption>{caption}")
        parts.append("</figcaption></figure>")
    return "".join(parts) + "</details>"


def _details(result: Result, anchor: str, dumps: dict[str, str], pictures: dict[str, Path]) -> str:
    """The cell's own section: everything it has to say, at full width."""
    title = f"{result.op} [{result.label}]: {_outcome(result)}"
    parts = [f'<details id="{anchor}"><summary>{html.escape(title)}</summary>']
    if result.waiver:
        parts.append(f"<p>waived in {WAIVERS_FILE}: {html.escape(result.waiver)}</p>")
    if result.message:
        parts.append(f"<pre>{html.escape(result.message)}</pre>")
    if result.notes:
        parts.append(f"<pre>{html.escape(chr(10).join(result.notes))}</pre>")
    if result.warnings:
        count = len(result.warnings)
        parts.append(f"<details><summary>{count} warning{'s' if count > 1 else ''}</summary>")
        parts.append(f"<pre>{html.escape(chr(10).join(result.warnings))}</pre></details>")
    if pictures:
        parts.append(_figures(pictures))
    for name, text in dumps.items():
        parts.append(f"<details><summary>{html.escape(name)}</summary>")
        parts.append(f"<pre>{html.escape(text)}</pre></details>")
    return "".join(parts) + "</details>"


def _dumps(dump_dir: Path | None, result: Result) -> dict[str, str]:
    """The graph dumps of a GE cell, by file name (see ``opsdk.harness.columns.ge.dump``)."""
    if dump_dir is None or result.column != "ge":
        return {}
    case = Path(dump_dir) / case_dir(result.op, result.label)
    return {p.name: p.read_text() for p in sorted(case.glob("graph*_*"))}


def _definitions(items: dict) -> str:
    return "".join(
        f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>" for k, v in items.items()
    )


def render(
    results: list[Result],
    environment: dict,
    dump_dir: Path | None = None,
    run: dict | None = None,
    pictures: Path | None = None,
) -> str:
    """The page; ``pictures`` is the folder the cells' graphs were drawn in."""
    ops, backends, shapes, by_cell = grid(results)
    rows = [
        "<tr><th rowspan=2>op</th>"
        + "".join(f"<th colspan={len(shapes)}>{html.escape(b)}</th>" for b in backends)
        + "</tr>",
        "<tr>" + "".join(f"<th>{html.escape(m)}</th>" for _ in backends for m in shapes) + "</tr>",
    ]
    sections = []
    for op in ops:
        cells = []
        for b in backends:
            for m in shapes:
                result = by_cell.get((op, b, m))
                dumps = _dumps(dump_dir, result) if result else {}
                drawn = graph_pictures.found(pictures, op, result.label) if result else {}
                anchor = None
                if result and _has_details(result, dumps, drawn):
                    anchor = f"cell-{len(sections) + 1}"
                    sections.append(_details(result, anchor, dumps, drawn))
                cells.append(_cell(result, anchor))
        rows.append(f"<tr><th>{html.escape(op)}</th>{''.join(cells)}</tr>")
    head = dict(run or {})
    title = head.pop("title", CHECK_TITLE)
    head |= {"time in cells": f"{sum(r.seconds for r in results):.1f} s"}
    head |= {k: environment[k] for k in _HEAD_ENVIRONMENT if k in environment}
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width'>"
        f"<title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}: {html.escape(summary(results))}</h1>"
        f"<dl>{_definitions(head)}</dl>"
        f"<div class=matrix><table>{''.join(rows)}</table></div>"
        + (f"<h2>Cells</h2>{''.join(sections)}" if sections else "")
        + f"<h2>Environment</h2><dl>{_definitions(environment)}</dl>"
        "</body></html>\n"
    )
