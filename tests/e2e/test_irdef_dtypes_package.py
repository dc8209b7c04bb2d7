"""A `--from-cann` package made by `opsdk new` (which runs ruff): its ir.py declares the
definition's dtype rows."""

import json


def test_a_from_cann_package_s_ir_declares_the_definition_s_rows(tmp_path):
    from opsdk import cli
    from opsdk._runtime import irdef
    from opsdk.harness.run import target

    source = tmp_path / "rows.json"
    tensor = {"param_type": "required", "format": ["ND", "ND"]}
    entry = {
        "op": "RowsOp",
        "input_desc": [dict(tensor, name="x", type=["float16", "float"])],
        "output_desc": [dict(tensor, name="y", type=["int32", "int64"])],
    }
    source.write_text(json.dumps([entry]))
    argv = ["new", "--from-cann", str(source), "--namespace", "t_rows", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    text = (tmp_path / "rows_op" / "rows_op" / "ir.py").read_text()
    assert '"x": ("DT_FLOAT16", "DT_FLOAT")' in text
    assert '"y": ("DT_INT32", "DT_INT64")' in text
    target.load(str(tmp_path / "rows_op"))
    assert dict(irdef.lookup("RowsOp").dtypes) == {
        "x": ("DT_FLOAT16", "DT_FLOAT"),
        "y": ("DT_INT32", "DT_INT64"),
    }
