"""What each report says of a cell beyond its status: warnings, waiver reasons, xfail
messages, durations, the run's metadata, and why a run of passing cells exits 1.

Rendered in process from hand-made results; the pages of real runs, and their
layout in a browser, are in tests/e2e/test_reports.py.
"""

import re

from opsdk import report
from opsdk.axes import SHAPE_MODES
from opsdk.harness.cell import Result
from opsdk.report import html as html_report
from opsdk.report import markdown as markdown_report

BOXED = "UserWarning: Your compiler for AOTAutograd is returning a function that doesn't " + (
    "take boxed arguments. Please wrap it with functorch.compile.make_boxed_func."
)
LOGGED = "torchair ERROR: graph fell back"
RESULTS = [
    Result("ns::op", "eager", "static", "pass", seconds=0.25),
    Result("ns::op", "eager", "dynamic", "skip", message="not here", seconds=0.01),
    Result("ns::op", "ge", "static", "pass", seconds=1.5, warnings=(BOXED,)),
    Result("ns::op", "ge", "dynamic", "pass", seconds=1.25, warnings=(BOXED,)),
    Result("ns::op", "opcheck", "static", "xfail", "fake", "fake shape [1] != [2]", 0.5, "bug #7"),
    Result(
        "ns::other", "ge", "static", "fail", "ge-exec", "values differ", 2.0, warnings=(LOGGED,)
    ),
]
RUN = {"date": "2030-01-02T03:04:05+00:00", "target": "pkg", "command": "opsdk check pkg --x"}
ENVIRONMENT = {"opsdk": "9.9", "torch": "2.13.0", "torchair": "offline", "python": "3.11"}


def _stale(n: int) -> list[Result]:
    return [
        Result("ns::op", "eager", mode, "pass", message="remove the waiver", waiver="old bug")
        for mode in SHAPE_MODES[:n]
    ]


def test_the_legend_gives_skip_a_mark_no_shape_mode_uses():
    text = report.matrix(RESULTS)
    legend = text.splitlines()[4]
    assert legend == ("(s = static, d = dynamic; ✓ pass, F fail, E error, - skip, x xfail)"), text
    marks = dict(re.findall(r"(\S) (pass|fail|error|skip|xfail)", legend))
    assert not set(marks) & {m[0] for m in SHAPE_MODES}
    assert text.splitlines()[2].startswith("ns::op    ✓ -")


def test_the_summary_says_why_a_run_whose_cells_pass_fails():
    assert report.summary(_stale(1)) == (
        "1 pass; 1 stale waiver: remove it from opsdk-waivers.toml"
    )
    assert report.summary(_stale(2)).endswith(
        "; 2 stale waivers: remove them from opsdk-waivers.toml"
    )
    assert report.summary(RESULTS[:1]) == "1 pass"
    assert report.matrix(_stale(1)).endswith(
        "\n1 pass; 1 stale waiver: remove it from opsdk-waivers.toml"
    )


def test_the_terminal_lists_warnings_under_their_cells_after_the_matrix():
    lines = report.matrix(RESULTS).splitlines()
    at = lines.index("Warnings (in full in the --json, --report and --markdown files):")
    assert lines[at + 1 : at + 5] == [
        "ns::op [ge-static] [ge-dynamic]",
        f"  {BOXED[:66]}…{BOXED[-33:]}",  # the end kept: a reason's file:line
        "ns::other [ge-static]",
        f"  {LOGGED}",
    ]
    assert lines.index("ns::other [ge-static]: fail in layer ge-exec: values differ") < at
    assert "Warnings" not in report.matrix(RESULTS[:2])


def test_the_terminal_shows_why_a_cell_was_not_run_whole_on_one_line_an_op():
    """A column's skip reason it warns with (the ``ascendc`` column's "not run: ..."): the
    terminal's line for it is whole, one per op however many of its cells skipped."""
    reason = "not run: the kernel does not compile: op_kernel/k.h:38: " + "x" * 120
    skipped = [
        Result(
            "ns::op",
            "ascendc",
            mode,
            "skip",
            message=reason,
            warnings=(f"UserWarning: ascendc: {reason}",),
        )
        for mode in SHAPE_MODES[:2]
    ]
    lines = report.matrix(skipped).splitlines()
    at = lines.index("Warnings (in full in the --json, --report and --markdown files):")
    assert lines[at + 1 :] == [
        "ns::op [ascendc-static] [ascendc-dynamic]",
        f"  UserWarning: ascendc: {reason}",
        "",
        "2 skip",
    ]


def test_markdown_gives_each_waived_and_warning_cell_its_details():
    text = markdown_report.render(RESULTS)
    waived = text.split("### Waived cells (xfail)\n")[1].split("###")[0]
    assert "- **ns::op [opcheck-static]**: xfail in layer `fake`; waived: bug #7" in waived
    assert "  fake shape [1] != [2]\n" in waived
    failing = text.split("### Failing cells\n")[1].split("###")[0]
    assert "- **ns::other [ge-static]**: fail in layer `ge-exec`" in failing
    assert f"  Warnings:\n\n  ```text\n  {LOGGED}\n  ```" in failing
    warned = text.split("### Cells that warned\n")[1]
    assert warned.count(BOXED) == 2 and "[ge-dynamic]**: pass" in warned
    assert "## opsdk conformance: 3 pass, 1 fail, 1 skip, 1 xfail" in text


def test_html_heads_with_the_run_and_gives_each_cell_its_time_and_details():
    page = html_report.render(RESULTS, ENVIRONMENT, run=RUN)
    head = page.split("<table>")[0]
    for key, value in [
        *RUN.items(),
        ("opsdk", "9.9"),
        ("torch", "2.13.0"),
        ("torchair", "offline"),
    ]:
        assert f"<dt>{key}</dt><dd>{value}</dd>" in head
    assert "<dt>time in cells</dt><dd>5.5 s</dd>" in head and "python" not in head
    cells = re.findall(r'<td class="(\w+)">(.*?)</td>', page)
    assert [c for c, _ in cells][:3] == ["pass", "skip", "pass"]
    assert cells[0][1] == "pass <small>0.25 s</small>"
    anchors = dict(re.findall(r'<a href="#(cell-\d+)">([^<]+)</a>', page))
    assert sorted(anchors.values()) == ["fail in ge-exec", "pass", "pass", "skip", "xfail in fake"]
    sections = dict(re.findall(r'<details id="(cell-\d+)"><summary>([^<]+)</summary>', page))
    assert set(sections) == set(anchors)
    xfail = page.split("ns::op [opcheck-static]: xfail in fake</summary>")[1].split("</details>")[0]
    assert "<p>waived in opsdk-waivers.toml: bug #7</p>" in xfail
    assert "<pre>fake shape [1] != [2]</pre>" in xfail
    ge = page.split("ns::op [ge-static]: pass</summary>")[1]
    assert ge.startswith("<details><summary>1 warning</summary><pre>UserWarning: Your compiler")
    assert "<h2>Environment</h2><dl><dt>opsdk</dt>" in page and "<dt>python</dt>" in page


def test_html_of_a_stale_waiver_names_the_waiver_and_says_why_the_run_failed():
    page = html_report.render(_stale(1), ENVIRONMENT)
    assert (
        "<h1>opsdk conformance: 1 pass; 1 stale waiver: remove it from opsdk-waivers.toml</h1>"
        in page
    )
    assert "<p>waived in opsdk-waivers.toml: old bug</p>" in page


def _wide() -> list[Result]:
    """Two ops in 18 columns (backends under option profiles and usage contexts), their
    statuses cycling, so each cell has a mark of its own to find."""
    statuses = ("pass", "fail", "skip", "xfail")
    cells = [
        (op, backend, profile, context, shapes)
        for op in ("ns::op", "ns::other_op")
        for backend in ("eager", "ge", "npugraph_ex")
        for profile in (None, "frozen_parameter")
        for context in (None, "view", "buffer")
        for shapes in ("static", "dynamic")
    ]
    return [
        Result(op, backend, shapes, statuses[i % 4], profile=profile, context=context)
        for i, (op, backend, profile, context, shapes) in enumerate(cells)
    ]


def _cells_shown(lines: list[str]) -> dict[tuple[str, str, str], str]:
    """(op, column, shape mode) -> mark, read back from the matrix's blocks by where each
    column's name starts in its block's head."""
    shown = {}
    for head, sub, *rows in (block.split("\n") for block in "\n".join(lines).split("\n\n")):
        starts = [(m.start(), m.group()) for m in re.finditer(r"\S+", head)]
        for row in rows:
            op = row.split()[0]
            for start, column in starts:
                modes, marks = sub[start:].split()[:2], row[start:].split()[:2]
                for mode, mark in zip(modes, marks, strict=True):
                    assert (op, column, mode) not in shown, (op, column, mode)
                    shown[op, column, mode] = mark
    return shown


def test_a_matrix_wider_than_the_terminal_folds_into_blocks_of_column_groups():
    results = _wide()
    lines = report.matrix(results, width=80).splitlines()
    legend = next(i for i, line in enumerate(lines) if line.startswith("(s = static"))
    table = lines[:legend]
    assert max(len(line) for line in table) <= 80, "\n".join(table)
    blocks = "\n".join(table).count("\n\n") + 1
    assert blocks > 1 and sum(line.startswith("ns::op ") for line in table) == blocks
    assert sum(line.startswith("(s = static") for line in lines) == 1  # the legend once
    marks = {"pass": "✓", "fail": "F", "skip": "-", "xfail": "x"}
    expected = {(r.op, r.variant, r.shapes[0]): marks[r.status] for r in results}
    assert _cells_shown(table) == expected, "\n".join(table)


def test_a_matrix_that_fits_is_one_block_whatever_the_width():
    results = _wide()
    wide = report.matrix(results, width=1000)
    assert "\n\n" not in wide.split("\n(s = static")[0]
    assert report.matrix(RESULTS, width=40) == report.matrix(RESULTS, width=1000)


def test_a_passing_cells_notes_are_in_its_html_details_and_markdown_entry():
    noted = Result("ns::op", "ge", "mark_static", "pass", notes=(NOTE,), warnings=(BOXED,))
    page = html_report.render([noted], ENVIRONMENT, run=RUN)
    details = page.split("ns::op [ge-mark_static]: pass</summary>")[1]
    assert details.startswith(f"<pre>{NOTE}</pre><details><summary>1 warning")
    text = markdown_report.render([noted])
    assert f"  Notes:\n\n  ```text\n  {NOTE}\n  ```" in text
    only_notes = Result("ns::op", "ge", "dynamic", "pass", notes=(NOTE,))
    assert '<details id="cell-' in html_report.render([only_notes], ENVIRONMENT, run=RUN)
    quiet = Result("ns::op", "ge", "static", "pass")
    assert '<details id="cell-' not in html_report.render([quiet], ENVIRONMENT, run=RUN)


NOTE = "host values taken: call 0 lens=[2]; call 1 lens=[3]"


def test_the_terminal_says_a_failures_repeated_why_and_fix_once_then_refers_to_it():
    """vllm-ascend's five ops whose call torch.compile drops each carried the same 200
    characters of why and fix; the reports keep every message whole."""
    fix = (
        "torch.compile drops the call (nothing keeps it in the graph), and with it whatever "
        "the op does; mark each argument its kernel writes Tensor(a!)"
    )
    failed = [
        Result(f"ns::{op}", "registry", "static", "fail", "registry", f"{op} marks none: {fix}")
        for op in ("a", "b")
    ] + [Result("ns::c", "registry", "static", "fail", "registry", "short: same short fix")] * 2
    lines = report.matrix(failed).splitlines()
    assert f"ns::a [registry-static]: fail in layer registry: a marks none: {fix}" in lines
    assert (
        "ns::b [registry-static]: fail in layer registry: b marks none: "
        "as for ns::a [registry-static] above"
    ) in lines
    assert (
        lines.count("ns::c [registry-static]: fail in layer registry: short: same short fix") == 2
    )
