"""What `opsdk new` refuses or makes where it starts processes: a package name another
module answers to (asked of a fresh interpreter), and packages it formats with ruff."""

from pathlib import Path

import pytest
from msopgen_text import MSOPGEN

from opsdk import cli


def test_the_msopgen_file_without_typos_is_made(tmp_path, capsys):
    source = tmp_path / "my_op.json"
    source.write_text(MSOPGEN % ('["ND"]', '["fp16", "float"]', '"list_int"', '"{0}"'))
    assert cli.main(["new", "--from-cann", str(source), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "my_op" / "my_op" / "ir.py").is_file()


def _guide_line(start: str) -> str:
    """The line of the guide's scaffold page (its example output) that starts with ``start``."""
    guide = Path(__file__).parents[2] / "docs" / "guide" / "scaffold.md"
    return next(line.strip() for line in guide.read_text().splitlines() if start in line)


def test_a_written_input_returned_other_than_torch_npu_s_way_is_refused_as_the_guide_says(
    tmp_path, capsys
):
    """The guide's §3: only the first argument, as the one return, may be returned written
    (torch_npu's ``Tensor(a!) self -> Tensor(a!)``); its example refusal is the real one."""
    bad = "my_bad(Tensor x, Tensor(a!) y) -> Tensor(a!)"
    assert cli.main(["new", "my_bad", "--schema", bad, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == _guide_line("opsdk new: error: only an in-place op may return")
    assert not (tmp_path / "o").exists()
    torch_npu_way = "my_bad(Tensor(a!) x, Tensor y) -> Tensor(a!)"  # the correct twin
    assert cli.main(["new", "my_bad", "--schema", torch_npu_way, "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize(
    ("name", "taken"),
    [
        ("os", "a module of Python's standard library"),
        ("json", "a module of Python's standard library"),
        ("typing", "a module of Python's standard library"),
        ("torch", "a module opsdk imports"),
        ("opsdk", "a module opsdk imports"),
        ("torchair", "a module opsdk imports"),
        ("numpy", "importable here already ("),
        ("tests", "the name of the project's tests/ folder"),
        ("conftest", "the module pytest makes of the project's tests/conftest.py"),
    ],
)
def test_a_package_name_another_module_answers_to_is_refused(tmp_path, capsys, name, taken):
    """`opsdk new os` used to succeed, then `check` imported the standard library's os
    ("os declares no OPS"); `opsdk new tests` ended in a cookiecutter traceback."""
    assert cli.main(["new", name, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"error: package name {name!r} is {taken}" in err and "\n" not in err
    assert err.endswith(f": choose another op name (e.g. {name}_op)")
    assert not (tmp_path / "o").exists()
