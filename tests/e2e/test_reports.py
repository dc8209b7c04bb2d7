"""`opsdk check`'s reports: progress lines, the HTML page (rendered in headless
Chromium), the Markdown summary for CI logs, and the pictures of failing cells' graphs
in both (and from `opsdk graph`)."""

import io
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from browser import browser, colors
from scaffolded import edit, implemented

from opsdk.axes import SHAPE_MODES
from opsdk.harness.cell import Result
from opsdk.harness.columns import names
from opsdk.harness.run.progress import Progress
from opsdk.report import html as html_report
from opsdk.report import markdown as markdown_report
from opsdk.report.graphs.ge import COLORS

REPO = Path(__file__).resolve().parents[2]
NAMESPACE = "reports_t"


@pytest.fixture(scope="module")
def broken(scaffolds, tmp_path_factory):
    """A run over an add whose converter feeds x to both GE inputs: eager and aot_eager
    pass, ge fails on its values. Writes every report, and appends to a job summary."""
    tmp = tmp_path_factory.mktemp("broken")
    pkg = scaffolds.copy(tmp, "my_add", namespace=NAMESPACE)
    converter = pkg / "my_add" / "converter.py"
    lowering = 'inputs={"x": x, "y": y}'
    assert lowering in converter.read_text()
    converter.write_text(converter.read_text().replace(lowering, 'inputs={"x": x, "y": x}'))
    step_summary = tmp / "step_summary.md"
    step_summary.write_text("earlier step\n")
    argv = [sys.executable, "-m", "opsdk", "check", str(pkg), "--shapes", "static"]
    argv += ["--backend", "eager,aot_eager,ge", "--dump", str(tmp / "dump")]
    argv += ["--report", str(tmp / "r.html"), "--markdown", str(tmp / "r.md")]
    env = {"GITHUB_STEP_SUMMARY": str(step_summary)}
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **env}, cwd=tmp)
    assert done.returncode == 1, done.stdout + done.stderr
    return tmp, done


def _td_cells(page: str) -> list[tuple[str, str]]:
    """(class, inner HTML) of each matrix cell, in row order."""
    return re.findall(r'<td class="?(\w+)"?>(.*?)</td>', page, re.S)


def test_progress_names_each_cell_before_it_runs_then_its_outcome(broken):
    _, done = broken
    line = re.compile(rf"\[(\d)/3\] {NAMESPACE}::my_add \[(\S+)\] \.\.\. (.+) \(\d+\.\d\d s\)")
    progress = [line.fullmatch(t) for t in done.stdout.splitlines() if t[:1] == "["]
    assert [m.groups() if m else None for m in progress] == [
        ("1", "eager-static", "pass"),
        ("2", "aot_eager-static", "pass"),
        ("3", "ge-static", "fail in ge-exec"),
    ], done.stdout


def test_progress_log_cut_mid_cell_ends_with_that_cell():
    stream = io.StringIO()
    progress = Progress(12, stream)
    progress.start("ns::op [eager-static]")
    progress.finish([Result("ns::op", "eager", "static", "pass", seconds=0.5)])
    progress.start("ns::op [ge-dynamic]")
    log = stream.getvalue()
    assert (
        log == "[ 1/12] ns::op [eager-static] ... pass (0.50 s)\n[ 2/12] ns::op [ge-dynamic] ... "
    )


def test_a_reader_that_leaves_early_costs_neither_the_report_nor_the_exit_code(tmp_path):
    """`opsdk check P --json r.json | head -n 2`: the reader leaves after two progress lines,
    while the aot_eager cells still run; the run goes on, writes its report, exits 0."""
    report = tmp_path / "r.json"
    argv = [sys.executable, "-m", "opsdk", "check", str(REPO / "examples/custom_ops/my_add")]
    argv += ["--backend", "eager,aot_eager", "--json", str(report)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    head = [child.stdout.readline() for _ in range(2)]
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=600) == 0, err
    assert [line.startswith(b"[") for line in head] == [True, True]
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert json.loads(report.read_text())["summary"] == {"pass": 6}


def test_doctor_read_by_a_reader_already_gone_exits_0():
    """`opsdk doctor | head -1`, its reader gone before the first line: exit 0, nothing said."""
    read, write = os.pipe()
    os.close(read)
    argv = [sys.executable, "-m", "opsdk", "doctor"]
    done = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_an_ascii_terminal_gets_the_matrix_in_ascii(tmp_path):
    argv = [sys.executable, "-m", "opsdk", "check", str(REPO / "examples/custom_ops/my_add")]
    argv += ["--backend", "eager", "--shapes", "static"]
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(argv, capture_output=True, env=env, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    assert b"\nopsdk_examples::my_add .\n(s = static; . pass," in done.stdout, done.stdout


def test_html_report_links_each_failing_cell_to_layer_message_and_dumps(broken):
    tmp, done = broken
    page = (tmp / "r.html").read_text()
    assert not re.search(r"<(script|link|img)|src=|url\(", page), "not self-contained"
    cells = _td_cells(page)
    assert [c for c, _ in cells] == ["pass", "pass", "fail"], cells
    eager, aot, ge = (inner for _, inner in cells)
    assert re.fullmatch(r"pass <small>\d+\.\d\d s</small>", eager) and aot.startswith("pass <")
    assert ge.startswith('<a href="#cell-1">fail in ge-exec</a> <small>')
    details = page.split('<details id="cell-1">')[1].split("<h2>Environment</h2>")[0]
    assert details.startswith(
        f"<summary>{NAMESPACE}::my_add [ge-static]: fail in ge-exec</summary>"
    )
    assert "values differ" in details
    assert "<summary>graph0_ge.pbtxt</summary>" in details
    assert "<summary>graph0_fx.py</summary>" in details
    assert f"torch.ops.{NAMESPACE}.my_add.default" in details  # the FX dump, escaped into the page
    # The cell's graphs, drawn: collapsed, before the text dumps, one SVG each.
    graphs = details.split("<details><summary>graphs</summary>")[1].split("</details>")[0]
    assert graphs.count("<figure><svg") == 2 and graphs.count('class="node op"') == 2
    assert "<h1>opsdk conformance: 2 pass, 1 fail</h1>" in page


def test_html_report_heads_with_when_what_and_how_the_run_was_made(broken):
    tmp, _ = broken
    head = (tmp / "r.html").read_text().split("<table>")[0]
    meta = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>", head))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", meta["date"]), meta
    assert meta["target"] == str(tmp / "my_add")
    assert meta["command"].startswith(f"opsdk check {tmp / 'my_add'} --shapes static --backend ")
    assert meta["opsdk"] and meta["torch"].startswith("2.13") and "torchair" in meta


def test_html_report_of_an_example_is_all_pass(tmp_path, opsdk_cli):
    report = tmp_path / "r.html"
    example = REPO / "examples" / "custom_ops" / "my_add"
    run = opsdk_cli(
        "check", example, "--backend", "eager,ge", "--shapes", "static", "--report", report
    )
    assert run.code == 0, run.stdout + run.stderr
    cells = _td_cells(report.read_text())
    assert [c for c, _ in cells] == ["pass"] * 2 and "<details>" not in report.read_text()
    assert f"wrote {report}" in run.stdout


def test_html_report_renders_in_headless_chromium(broken, tmp_path):
    tmp, _ = broken
    page = (tmp / "r.html").read_text()
    dom = browser(tmp_path, "--dump-dom", (tmp / "r.html").as_uri())
    assert dom.returncode == 0, dom.stderr
    # The browser's own parse: the table's cells, a failing one linking to its <details>.
    assert len(re.findall(r'<td class="fail"><a href="#cell-1">fail in', dom.stdout)) == 1
    assert len(re.findall(r'<td class="pass">pass <small>', dom.stdout)) == 2
    assert '<details id="cell-1"><summary>' in dom.stdout
    # A screenshot with the failing cells opened, as a reader clicking them sees it.
    opened = tmp_path / "opened.html"
    opened.write_text(page.replace("<details>", "<details open>"))
    shot = tmp_path / "report.png"
    run = browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,800", opened.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 800)
    assert len(png) > 20_000, "a near-empty screenshot"
    # The matrix's pass (green) and fail (red) backgrounds are on screen.
    assert {(0xE6, 0xF6, 0xE6), (0xFD, 0xE8, 0xE8)} <= colors(png, 500)


LONG = "/a/path/" + "x" * 2500  # a token no line break fits in
# Written into the page by the browser once laid out: how far it scrolls sideways.
_MEASURE = (
    "<script>document.body.dataset.overflow = "
    "document.documentElement.scrollWidth - document.documentElement.clientWidth</script>"
)


def _long_results() -> list[Result]:
    """Every cell of a full matrix, each with details as long as they come."""
    message = f"values differ at {LONG}\n" + "many words " * 3000
    return [
        Result(
            "ns::" + "long_op_name" * 30,
            backend,
            shapes,
            "fail" if shapes == "static" else "xfail",
            "ge-exec",
            message,
            123.456,
            None if shapes == "static" else f"tracked in {LONG}",
            warnings=(f"UserWarning: {LONG}", "torchair ERROR: " + "word " * 500),
        )
        for backend in names()
        for shapes in SHAPE_MODES
    ]


@pytest.mark.parametrize("width", [600, 1200])
def test_html_report_details_of_any_length_never_scroll_sideways(broken, tmp_path, width):
    tmp, _ = broken
    run = {"command": f"opsdk check {LONG}", "target": LONG}
    pages = {
        "real": (tmp / "r.html").read_text(),
        "long": html_report.render(_long_results(), {"torchair": LONG}, run=run),
    }
    for name, page in pages.items():
        probe = tmp_path / f"{name}.html"
        opened = page.replace("<details", "<details open")
        probe.write_text(opened.replace("</body>", _MEASURE + "</body>"))
        dom = browser(tmp_path, f"--window-size={width},800", "--dump-dom", probe.as_uri())
        assert dom.returncode == 0, dom.stderr
        assert re.findall(r'data-overflow="(-?\d+)"', dom.stdout) == ["0"], name


def test_markdown_summary_holds_the_matrix_and_failing_cells(broken):
    tmp, done = broken
    text = (tmp / "r.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "## opsdk conformance: 2 pass, 1 fail"
    assert lines[2] == "| op | eager | aot_eager | ge |"
    assert lines[4] == f"| {NAMESPACE}::my_add | `✓` | `✓` | `✗` `ge-exec` |"
    assert f"- **{NAMESPACE}::my_add [eager-static]**: fail in layer `eager`" not in lines
    assert f"- **{NAMESPACE}::my_add [ge-static]**: fail in layer `ge-exec`" in lines
    assert text.count("values differ") == 1
    # Its graphs' pictures, linked relative to the report (in --dump's folder here).
    cell = f"dump/{NAMESPACE}.my_add.default/ge-static"
    assert f"  Graphs: [FX graph]({cell}/fx.svg), [GE graph]({cell}/ge.svg)" in lines
    assert (tmp / cell / "ge.svg").read_text().startswith("<?xml")
    summary = (tmp / "step_summary.md").read_text()
    assert summary == "earlier step\n" + text + "\n"
    assert f"wrote {tmp / 'step_summary.md'}" in done.stdout


def test_markdown_keeps_table_cells_on_one_line_and_lists_stale_waivers():
    results = [
        Result("ns::a|b", "eager", "static", "fail", "eager", "line one\nline two | pipe"),
        Result("ns::a|b", "eager", "dynamic", "pass", message="remove the waiver", waiver="x"),
    ]
    text = markdown_report.render(results)
    assert "| ns::a\\|b | `✗✓` `eager`, `stale waiver` |" in text
    assert "  line one\n  line two | pipe\n" in text
    assert "- **ns::a\\|b [eager-dynamic]**: pass" in text


@pytest.fixture(scope="module")
def baked(scaffolds, tmp_path_factory):
    """`opsdk check --report --markdown` and `opsdk graph` of an op whose converter bakes
    its symbolic scalar in (``int64_input(2)`` for ``int64_input(n)``): its specs only ever
    pass n=2, so every number agrees and only the GE graph shows the bug."""
    tmp = tmp_path_factory.mktemp("baked")
    schema = "my_shift(Tensor x, SymInt n) -> Tensor"
    pkg = implemented(scaffolds, tmp, "my_shift", schema, "return x + n")
    op = pkg / "my_shift"
    edit(op / "converter.py", '"n": int64_input(n)', '"n": int64_input(2)')
    specs = "from opsdk.inputs import F32, Fixed, Support, declare_supported\n\n"
    specs += "from .schema import OP\n\ndeclare_supported(OP, [Support(F32(2, 3), n=Fixed(2))])\n"
    (op / "specs.py").write_text(specs)
    edit(op / "__init__.py", "from . import fake, ir", "from . import fake, ir, specs")
    opsdk = [sys.executable, "-m", "opsdk"]
    check = [*opsdk, "check", str(pkg), "--backend", "ge", "--shapes", "dynamic", "--no-cache"]
    check += ["--report", str(tmp / "r.html"), "--markdown", str(tmp / "r.md")]
    graph = [*opsdk, "graph", str(pkg), "-k", "shift", "--backend", "ge", "--shapes", "dynamic"]
    graph += ["--out", str(tmp / "drawn")]
    runs = [
        subprocess.run(argv, capture_output=True, text=True, cwd=tmp) for argv in (check, graph)
    ]
    return tmp, *runs


CELL_DIR = "g_my_shift.my_shift.default/ge-dynamic"


def test_a_failing_cells_pictures_render_in_chromium_op_highlighted_baked_scalar_marked(
    baked, tmp_path
):
    tmp, done, _ = baked
    assert done.returncode == 1 and "fail in ge-graph" in done.stdout, done.stdout + done.stderr
    page = (tmp / "r.html").read_text()
    assert not re.search(r"<(script|link|img)|src=|url\(", page), "not self-contained"
    dom = browser(tmp_path, "--dump-dom", (tmp / "r.html").as_uri())
    assert dom.returncode == 0, dom.stderr
    svgs = re.findall(r"<svg.*?</svg>", dom.stdout, re.S)
    assert len(svgs) == 2  # the FX graph after AOT, the GE graph
    fx_svg, ge_svg = svgs
    for svg in svgs:  # the op's node, highlighted in each
        assert len(re.findall(r'<g id="\w+" class="node op">', svg)) == 1
    # Marked: the FX input of n (no GE input carries it), the Const it was baked into.
    fx_marked = re.findall(r'<g id="\w+" class="node marked">.*?</g>', fx_svg, re.S)
    ge_marked = re.findall(r'<g id="\w+" class="node marked">.*?</g>', ge_svg, re.S)
    assert len(fx_marked) == 1 and "no GE input carries it" in fx_marked[0]
    assert len(ge_marked) == 1 and ">Const<" in ge_marked[0] and "int64 [] = 2" in ge_marked[0]
    assert "✗ n baked in: read it from a host input" in ge_marked[0]
    # On screen, as a reader who opens the cell and its graphs sees them.
    opened = tmp_path / "opened.html"
    opened.write_text(page.replace("<details", "<details open"))
    shot = tmp_path / "graphs.png"
    run = browser(tmp_path, f"--screenshot={shot}", "--window-size=1200,2400", opened.as_uri())
    assert run.returncode == 0 and shot.exists(), run.stderr
    seen = colors(shot.read_bytes(), 2400)
    highlight, marked = (tuple(bytes.fromhex(COLORS[k][1:])) for k in ("op", "marked"))
    assert {highlight, marked} <= seen


def test_the_markdown_links_the_pictures_and_opsdk_graph_draws_one_cell(baked):
    tmp, done, graph = baked
    text = (tmp / "r.md").read_text()
    assert (
        f"  Graphs: [FX graph](r-graphs/{CELL_DIR}/fx.svg), [GE graph](r-graphs/{CELL_DIR}/ge.svg)"
        in text
    )
    assert "| g_my_shift::my_shift | `✗` `ge-graph` |" in text
    assert graph.returncode == 0, graph.stdout + graph.stderr
    drawn = tmp / "drawn" / CELL_DIR
    assert [line for line in graph.stdout.splitlines() if line.startswith("wrote")] == [
        f"wrote {drawn / name}" for name in ("fx.svg", "fx.png", "ge.svg", "ge.png")
    ]
    assert (drawn / "ge.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'class="node marked"' in (drawn / "ge.svg").read_text()
