"""opsdk's pytest plugin, as a package author meets it: `pytest` run inside a generated package.

Each run is a subprocess in the package directory, so the plugin is loaded the
way users load it (the ``pytest11`` entry point) and reads the package's own
pytest configuration. Runs narrow the matrix (``-o opsdk_columns=...``) to
what the test is about, to keep the suite fast.
"""

import re
import subprocess
import sys
import textwrap

import pytest
from scaffolded import edit

from opsdk.axes import SHAPE_MODES
from opsdk.harness.columns import column, compiling, names


def every_column() -> list[str]:
    """The columns every op has cells in (``fusion``: only an op with a pattern)."""
    return [n for n in names() if column(n).selects is None]


def _package(scaffolds, tmp_path, **kwargs):
    """The add package with its matrix alone: its first test (tests/test_my_add.py) is
    tests/e2e/test_scaffold.py's, and would add an item to every run here."""
    pkg = scaffolds.copy(tmp_path, "my_add", namespace="plug", **kwargs)
    (pkg / "tests" / "test_my_add.py").unlink()
    return pkg


def _pytest(cwd, *args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _collected(done) -> list[str]:
    return [line for line in done.stdout.splitlines() if line.startswith("plug::")]


def test_generated_package_runs_every_cell_as_an_item_on_two_workers(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path)
    done = _pytest(pkg, "-n", "2", "-v", "-rA")
    assert done.returncode == 0, done.stdout + done.stderr
    passed = set(re.findall(r"\[(gw\d)\] \[ *\d+%\] PASSED (\S+)", done.stdout))
    assert {cell for _, cell in passed} == {
        f"plug::my_add[{b}-{s}]" for b in every_column() for s in SHAPE_MODES
    }
    assert {worker for worker, _ in passed} == {"gw0", "gw1"}
    assert "15 passed" in done.stdout
    # torch.jit's deprecations at TorchAir's import are gone; a cell's warnings are its own.
    assert "warnings summary" not in done.stdout and "torch.jit" not in done.stdout


def test_markers_and_keywords_select_backends_and_shape_modes(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path, inplace=True, style="library")
    ge = _pytest(pkg, "--collect-only", "-q", "--strict-markers", "-m", "ge")
    assert ge.returncode == 0, ge.stdout + ge.stderr
    # an in-place op: its compiled columns also run in the view and buffer contexts
    cells = [f"ge-{s}" for s in SHAPE_MODES]
    cells += [f"ge-{s}/{context}" for context in ("view", "buffer") for s in SHAPE_MODES]
    assert _collected(ge) == [f"plug::my_add[{c}]" for c in cells]
    dynamic = _pytest(pkg, "--collect-only", "-q", "-k", "dynamic and not view and not buffer")
    assert dynamic.returncode == 0, dynamic.stdout + dynamic.stderr
    assert _collected(dynamic) == [f"plug::my_add[{b}-dynamic]" for b in every_column()]
    view = _pytest(pkg, "--collect-only", "-q", "--strict-markers", "-m", "view and static")
    assert view.returncode == 0, view.stdout + view.stderr
    assert _collected(view) == [f"plug::my_add[{b}-static/view]" for b in compiling()]


def test_a_failing_cell_fails_with_its_layer_and_message_not_a_traceback(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path)
    kernels = pkg / "my_add" / "kernels.py"
    edit(kernels, "torch.add(x, y).contiguous()", "(x - y).contiguous()")
    edit(kernels, "import torch\n", "import warnings\n\nimport torch\n")
    edit(
        kernels,
        "    return (x - y)",
        '    warnings.warn("kernel says hi", stacklevel=1)\n    return (x - y)',
    )
    done = _pytest(pkg, "-o", "opsdk_columns=eager", "-o", "opsdk_shapes=static")
    assert done.returncode == 1, done.stdout + done.stderr
    failure = done.stdout.split("= FAILURES =")[1].split("short test summary")[0]
    assert "plug::my_add[eager-static]" in failure
    assert "fail in layer eager:" in failure and "max abs err" in failure
    assert "Traceback" not in failure and "pytest_plugin.py" not in failure
    assert "Captured log" not in failure
    # What was warned while the cell ran is in its report, once.
    section = failure.split(" Captured warnings call ")[1]
    assert section.count("UserWarning: kernel says hi") == 1, failure
    assert "warnings summary" not in done.stdout


WAIVERS = """
[[waiver]]
op = "plug::my_add"
backend = "opcheck"
shapes = "static"
reason = "fake function being rewritten"

[[waiver]]
op = "my_add"
backend = "eager"
shapes = "*"
reason = "kernel was wrong"
"""


@pytest.fixture
def waived_package(scaffolds, tmp_path):
    """A fake function with the wrong shape (opcheck fails, eager passes), one opcheck
    failure waived and a stale waiver on the passing eager cells."""
    pkg = _package(scaffolds, tmp_path)
    edit(pkg / "my_add" / "fake.py", "meta.elementwise(x, y)", "meta.elementwise(x, y)[:1]")
    (pkg / "opsdk-waivers.toml").write_text(WAIVERS)
    return pkg


def test_pytest_xfails_waived_cells_and_fails_stale_waivers(waived_package):
    done = _pytest(
        waived_package, "-rxX", "-o", "opsdk_columns=eager opcheck", "-o", "opsdk_shapes=static"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 xfailed" in done.stdout
    assert (
        "XFAIL plug::my_add[opcheck-static] - fails in layer fake, "
        "waived: fake function being rewritten"
    ) in done.stdout
    assert (
        "[XPASS(strict)] waived in opsdk-waivers.toml (kernel was wrong) but it passes: "
        "remove the waiver"
    ) in done.stdout.split("= FAILURES =")[1]


def test_opsdk_check_reports_waived_cells_xfail_and_exits_1_on_a_stale_waiver(
    waived_package, opsdk_cli
):
    page, markdown = waived_package / "r.html", waived_package / "r.md"
    run = opsdk_cli(
        "check",
        waived_package,
        "--backend",
        "eager,opcheck",
        "--shapes",
        "static,dynamic",
        "--report",
        page,
        "--markdown",
        markdown,
        json_report=True,
    )
    assert run.code == 1, run.stdout + run.stderr
    summary = "2 pass, 1 fail, 1 xfail; 2 stale waivers: remove them from opsdk-waivers.toml"
    assert run.stdout.splitlines()[-4] == summary, run.stdout
    # Both reports give the waived cell its reason and its failure, and say why the run failed.
    html = page.read_text()
    assert f"<h1>opsdk conformance: {summary}</h1>" in html
    xfail = html.split("plug::my_add [opcheck-static]: xfail in fake</summary>")[1]
    assert xfail.startswith("<p>waived in opsdk-waivers.toml: fake function being rewritten</p>")
    assert "test_faketensor" in xfail.split("</details>")[0]
    text = markdown.read_text()
    assert f"## opsdk conformance: {summary}" in text
    waived = text.split("### Waived cells (xfail)")[1]
    assert (
        "- **plug::my_add [opcheck-static]**: xfail in layer `fake`; "
        "waived: fake function being rewritten"
    ) in waived and "test_faketensor" in waived
    [xfail] = run.cells(column="opcheck", shapes="static")
    assert (xfail["status"], xfail["layer"]) == ("xfail", "fake")
    assert xfail["waiver"] == "fake function being rewritten"
    [unwaived] = run.cells(column="opcheck", shapes="dynamic")
    assert (unwaived["status"], unwaived["waiver"]) == ("fail", None)
    for stale in run.cells(column="eager"):
        assert (stale["status"], stale["waiver"]) == ("pass", "kernel was wrong")
        assert stale["message"].endswith("but it passes: remove the waiver")
    assert "plug::my_add [eager-static]: pass: waived in opsdk-waivers.toml" in run.stdout


def test_a_waiver_for_an_op_that_does_not_exist_is_an_error(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    (pkg / "opsdk-waivers.toml").write_text(WAIVERS.replace('"my_add"', '"my_sub"'))
    expected = "waiver 2 names op 'my_sub', which the package does not declare"
    run = opsdk_cli("check", pkg)
    assert run.code == 2 and run.stderr.count("\n") == 1 and expected in run.stderr
    done = _pytest(pkg, "-o", "opsdk_backends=eager")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ERROR collecting my_add" in done.stdout and expected in done.stdout
    assert "Traceback" not in done.stdout


def test_naming_a_test_file_runs_that_file_without_the_matrix(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path)
    (pkg / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")
    done = _pytest(pkg, "-v", "tests/test_more.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "plug::" not in done.stdout


def test_opsdk_options_adds_profile_cells_marked_with_their_profile(scaffolds, tmp_path):
    pkg = _package(scaffolds, tmp_path)
    options = ("-o", "opsdk_options=capture_limit no_clone_input", "-o", "opsdk_shapes=dynamic")
    done = _pytest(pkg, "--collect-only", "-q", "--strict-markers", "-m", "capture_limit", *options)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _collected(done) == ["plug::my_add[npugraph_ex+capture_limit-dynamic]"]
    bad = _pytest(pkg, "--collect-only", "-o", "opsdk_options=frozen")
    assert bad.returncode == 4
    assert "opsdk_options: unknown frozen: choose from frozen_parameter" in bad.stderr


def test_unknown_column_in_the_ini_is_a_usage_error(scaffolds, tmp_path):
    done = _pytest(_package(scaffolds, tmp_path), "-o", "opsdk_columns=eager warp")
    assert done.returncode == 4
    assert "opsdk_columns: unknown warp: choose from eager" in done.stderr


def test_the_columns_ini_is_read_by_its_older_name_too(scaffolds, tmp_path):
    """``opsdk_backends`` (the name before audit checks were columns too) still narrows
    the matrix; where both are set, ``opsdk_columns`` wins."""
    pkg = _package(scaffolds, tmp_path)
    static = ("--collect-only", "-q", "-o", "opsdk_shapes=static")
    old = _pytest(pkg, *static, "-o", "opsdk_backends=eager")
    both = _pytest(pkg, *static, "-o", "opsdk_backends=eager", "-o", "opsdk_columns=opcheck")
    assert _collected(old) == ["plug::my_add[eager-static]"], old.stdout + old.stderr
    assert _collected(both) == ["plug::my_add[opcheck-static]"], both.stdout + both.stderr


def test_plugin_is_inert_without_opsdk_package(tmp_path):
    """Installed with opsdk, so loaded by every pytest run: without the opt-in it must not
    add items or markers, nor import torch."""
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "test_plain.py").write_text(
        textwrap.dedent(
            """
            import sys

            def test_plain(pytestconfig):
                assert pytestconfig.pluginmanager.hasplugin("opsdk")
                assert "torch" not in sys.modules
                assert not any(m.startswith("ge:") for m in pytestconfig.getini("markers"))
            """
        )
    )
    done = _pytest(tmp_path, "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout and "::test_plain PASSED" in done.stdout
