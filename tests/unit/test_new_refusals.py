"""`opsdk new` refuses, in one line with exit 2 and nothing written, what it used to take
and then fail on: an empty --schema (it built the default add) and an op without a tensor
(it failed 12 of 15 cells)."""

import pytest

from opsdk import cli
from opsdk.inputs import I32


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("", "--schema is empty: give the op's schema, e.g. 'my_op(Tensor x) -> Tensor'"),
        ("  ", "--schema is empty"),
        ("my_op(int x) -> int", "my_op takes no tensor: an npu kernel, a GE graph"),
    ],
)
def test_a_schema_opsdk_cannot_check_is_refused(tmp_path, capsys, schema, message):
    assert cli.main(["new", "my_op", "--schema", schema, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_a_0_dim_spec_with_options_prints_as_written():
    """Case labels: no leading comma where there are no sizes."""
    assert repr(I32(value_range=(0, 2))) == "I32(value_range=(0, 2))"
    assert repr(I32(2, value_range=(0, 2))) == "I32(2, value_range=(0, 2))"
