"""Cells and results name their place in the matrix the same way everywhere:
pytest ids, progress lines, every report's columns."""

from dataclasses import replace

from opsdk import report
from opsdk._runtime.spec import parse
from opsdk.harness.cell import Cell, OpUnderTest, Result
from opsdk.report import markdown

ADD = OpUnderTest(parse("myops::my_add(Tensor x, Tensor y) -> Tensor"), "my_add")


def test_a_plain_cell_keeps_its_backend_shapes_id():
    cell = Cell(ADD, "ge", "dynamic")
    assert (cell.id, cell.variant) == ("myops::my_add[ge-dynamic]", "ge")


def test_context_and_profile_are_part_of_the_id_and_the_report_column():
    cell = Cell(ADD, "ge", "dynamic", context="view", profile="frozen_parameter")
    assert cell.id == "myops::my_add[ge+frozen_parameter-dynamic/view]"
    assert cell.variant == "ge+frozen_parameter/view"
    result = Result(ADD.name, "ge", "dynamic", "fail", "ge-exec", "wrong", context="view")
    assert result.describe().startswith("myops::my_add [ge-dynamic/view]: fail")


def test_reports_keep_a_context_variant_apart_from_its_plain_column():
    plain = Result(ADD.name, "ge", "dynamic", "pass")
    in_view = replace(plain, status="fail", layer="ge-exec", message="base", context="view")
    grid = report.grid([plain, in_view])
    assert grid.columns == ["ge", "ge/view"]
    assert grid.cell[(ADD.name, "ge/view", "dynamic")] is in_view
    text = markdown.render([plain, in_view])
    assert "| myops::my_add | `✓` |\n| myops::my_add /view | `✗` `ge-exec` |" in text
    assert "[ge-dynamic/view]" in text


def test_a_result_is_written_with_its_column_and_read_back_from_older_reports_too():
    """Reports name the column ``column``; those written before (key ``backend``) still
    read, so ``report merge`` takes an older shard."""
    result = Result(ADD.name, "ge", "dynamic", "fail", "ge-exec", "wrong", context="view")
    written = result.to_json()
    assert written["column"] == "ge" and "backend" not in written
    older = {("backend" if k == "column" else k): v for k, v in written.items()}
    assert Result.from_json(written) == Result.from_json(older) == result
