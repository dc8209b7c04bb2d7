"""`opsdk check --report FILE.html`: the matrix as one self-contained page.

No scripts, styles inline, nothing fetched: the page opens from a CI artefact
store or a mail attachment. Each failing cell is a ``<details>`` element that
opens to its layer, message and, when the run dumped graphs, the dumps.
"""

from __future__ import annotations

import html
from pathlib import Path

from opsdk.harness.ge import case_dir
from opsdk.harness.model import Result
from opsdk.report import grid, summary

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}
table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f4f4f4}
td.pass{background:#e6f6e6}
td.fail,td.error{background:#fde8e8}
td.skip,td.xfail{background:#f6f3e0}
details summary{cursor:pointer;font-weight:600}
pre{white-space:pre-wrap;max-width:60em;font-size:12px;background:#fafafa;padding:.5em}
dl{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}
"""


def _cell(result: Result | None, dumps: dict[str, str]) -> str:
    if result is None:
        return "<td>-</td>"
    label = html.escape(result.status)
    if result.status in ("pass", "skip") and not result.message:
        return f'<td class="{label}">{label}</td>'
    parts = [f"<summary>{label}{' in ' + html.escape(result.layer) if result.layer else ''}"]
    parts.append("</summary>")
    parts.append(f"<pre>{html.escape(result.message)}</pre>")
    for name, text in dumps.items():
        parts.append(f"<details><summary>{html.escape(name)}</summary>")
        parts.append(f"<pre>{html.escape(text)}</pre></details>")
    return f'<td class="{label}"><details>{"".join(parts)}</details></td>'


def _dumps(dump_dir: Path | None, result: Result) -> dict[str, str]:
    """The graph dumps of a GE cell, by file name (see ``opsdk.harness.ge.dump``)."""
    if dump_dir is None or result.backend != "ge":
        return {}
    case = Path(dump_dir) / case_dir(result.op, result.label)
    return {p.name: p.read_text() for p in sorted(case.glob("*"))}


def render(results: list[Result], environment: dict, dump_dir: Path | None = None) -> str:
    ops, backends, shapes, by_cell = grid(results)
    rows = [
        "<tr><th rowspan=2>op</th>"
        + "".join(f"<th colspan={len(shapes)}>{html.escape(b)}</th>" for b in backends)
        + "</tr>",
        "<tr>" + "".join(f"<th>{html.escape(m)}</th>" for _ in backends for m in shapes) + "</tr>",
    ]
    for op in ops:
        cells = []
        for b in backends:
            for m in shapes:
                result = by_cell.get((op, b, m))
                cells.append(_cell(result, _dumps(dump_dir, result) if result else {}))
        rows.append(f"<tr><th>{html.escape(op)}</th>{''.join(cells)}</tr>")
    env = "".join(
        f"<dt>{html.escape(str(k))}</dt><dd>{html.escape(str(v))}</dd>"
        for k, v in environment.items()
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<title>opsdk conformance</title>"
        f"<style>{_STYLE}</style></head><body>"
        f"<h1>opsdk conformance: {html.escape(summary(results))}</h1>"
        f"<table>{''.join(rows)}</table>"
        f"<h2>Environment</h2><dl>{env}</dl>"
        "</body></html>\n"
    )


def write(path: Path, results: list[Result], environment: dict, dump_dir=None) -> None:
    Path(path).write_text(render(results, environment, dump_dir))
