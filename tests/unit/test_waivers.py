"""opsdk-waivers.toml: read strictly, matched per cell, and applied to results.

End-to-end behaviour (`opsdk check` and pytest on a package with waivers) is in
test_pytest_plugin.py; here the file format and the status rules, in process.
"""

from types import SimpleNamespace

import pytest

from opsdk import report
from opsdk._runtime.spec import parse
from opsdk.harness.cell import OpUnderTest, Result
from opsdk.harness.run import waivers
from opsdk.harness.run.waivers import Waiver, WaiverError

ADD = OpUnderTest(parse("myops::my_add(Tensor x, Tensor y) -> Tensor"), "my_add")
MUL = OpUnderTest(parse("myops::my_mul(Tensor x, Tensor y) -> Tensor"), "my_add")

GOOD = """
[[waiver]]
op = "myops::my_add"
column = "ge"
shapes = "dynamic"
reason = "GE dynamic shapes need CANN 8.1"

[[waiver]]
op = "my_mul"
column = "*"
shapes = "*"
reason = "kernel not written yet"

[[waiver]]
op = "my_add"
column = "npugraph_ex"
shapes = "*"
context = "view"
reason = "npugraph_ex loses the write to a view (issue 7)"
"""


def _load(tmp_path, text: str) -> list[Waiver]:
    (tmp_path / waivers.FILE_NAME).write_text(text)
    package = SimpleNamespace(__file__=str(tmp_path / "my_add" / "__init__.py"))
    return waivers.load(package, [ADD, MUL])


def test_a_package_without_a_waiver_file_has_no_waivers(tmp_path):
    package = SimpleNamespace(__file__=str(tmp_path / "my_add" / "__init__.py"))
    assert waivers.load(package, [ADD]) == []


def test_waivers_match_by_op_backend_and_shape_mode_with_wildcards(tmp_path):
    waived = _load(tmp_path, GOOD)
    assert waivers.reason_for(waived, ADD, "ge", "dynamic") == "GE dynamic shapes need CANN 8.1"
    assert waivers.reason_for(waived, ADD, "ge", "static") is None
    assert waivers.reason_for(waived, ADD, "eager", "dynamic") is None
    for backend, shapes in (("eager", "static"), ("ge", "mark_static")):
        assert waivers.reason_for(waived, MUL, backend, shapes) == "kernel not written yet"
        # a waiver without a context covers every context of its cells
        chain = waivers.reason_for(waived, MUL, backend, shapes, context="chain")
        assert chain == "kernel not written yet"
    view = "npugraph_ex loses the write to a view (issue 7)"
    assert waivers.reason_for(waived, ADD, "npugraph_ex", "static", context="view") == view
    assert waivers.reason_for(waived, ADD, "npugraph_ex", "static") is None
    assert waivers.reason_for(waived, ADD, "npugraph_ex", "static", context="twice") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[waiver]\nop = 1", "fix the TOML"),
        ('[waivers]\nop = "my_add"', "[[waiver]] table"),
        ('[[waiver]]\nop = "my_add"\ncolumn = "ge"\nshapes = "*"', "reason missing or empty"),
        (
            '[[waiver]]\nop = "my_add"\ncolumn = "ge"\nshapes = "*"\nreason = " "',
            "reason missing or empty",
        ),
        (
            '[[waiver]]\nop = "my_add"\ncolumn = "ge"\nshape = "*"\nreason = "r"',
            "shapes missing or empty; unknown shape",
        ),
        (
            '[[waiver]]\nop = "my_add"\ncolumn = "gee"\nshapes = "*"\nreason = "r"',
            "waiver 1: unknown column 'gee': choose from eager",
        ),
        (
            '[[waiver]]\nop = "my_add"\ncolumn = "*"\nshapes = "symbolic"\nreason = "r"',
            "unknown shapes 'symbolic'",
        ),
        (
            '[[waiver]]\nop = "my_add"\ncolumn = "*"\nshapes = "*"\ncontext = "slice"\n'
            'reason = "r"',
            "unknown context 'slice': choose from view, chain, twice, buffer or '*'",
        ),
        (
            GOOD + '[[waiver]]\nop = "myops::my_sub"\ncolumn = "*"\nshapes = "*"\nreason = "r"',
            "waiver 4 names op 'myops::my_sub', which the package does not declare "
            "(its ops: myops::my_add, myops::my_mul): fix or remove the waiver",
        ),
    ],
    ids=[
        "bad-toml",
        "not-an-array",
        "no-reason",
        "blank-reason",
        "misspelt-key",
        "unknown-column",
        "unknown-shapes",
        "unknown-context",
        "unknown-op",
    ],
)
def test_a_waiver_that_could_never_match_is_a_one_line_error(tmp_path, text, expected):
    with pytest.raises(WaiverError) as err:
        _load(tmp_path, text)
    message = str(err.value)
    assert expected in message and "\n" not in message
    assert message.startswith(str(tmp_path / waivers.FILE_NAME))
    assert err.value.exit_code == 2


def _result(status, layer=None, message=""):
    return Result("myops::my_add", "ge", "dynamic", status, layer, message)


def test_a_waived_failure_is_xfail_and_keeps_its_layer_and_message():
    for status in ("fail", "error"):
        result = waivers.apply(_result(status, "converter", "no converter"), "tracked in #1")
        assert (result.status, result.layer) == ("xfail", "converter")
        assert result.message == "no converter" and result.waiver == "tracked in #1"
        assert not result.stale_waiver


def test_a_waived_pass_is_a_stale_waiver_that_says_to_remove_it():
    result = waivers.apply(_result("pass"), "tracked in #1")
    assert result.status == "pass" and result.stale_waiver
    assert result.message == (
        "waived in opsdk-waivers.toml (tracked in #1) but it passes: remove the waiver"
    )
    assert result.to_json()["waiver"] == "tracked in #1"
    assert result.describe() in report.matrix([result, _result("pass")])


def test_skips_setup_errors_and_unwaived_cells_are_left_alone():
    for result in (_result("skip", None, "n/a"), _result("error", "setup", "no TorchAir")):
        assert waivers.apply(result, "tracked in #1") == result
    unwaived = _result("fail", "eager", "wrong")
    assert waivers.apply(unwaived, None) == unwaived
    assert not _result("pass").stale_waiver


def test_a_waiver_names_its_column_by_the_older_key_backend_too(tmp_path):
    """Files written before the key was ``column`` read the same; both keys at once is
    one too many."""
    older = _load(tmp_path, GOOD.replace("column = ", "backend = "))
    assert older == _load(tmp_path, GOOD)
    both = GOOD.replace('column = "ge"', 'column = "ge"\nbackend = "ge"')
    with pytest.raises(WaiverError, match="waiver 1 needs .*; unknown backend"):
        _load(tmp_path, both)
