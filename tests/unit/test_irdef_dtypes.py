"""IrDef.dtypes: the data types a definition declares, kept with its IR (rows, like CANN's)."""

import json

import pytest

from opsdk.cann import read
from opsdk.irdef import Input, IrDef, Output


def _ir(**dtypes):
    return IrDef("Op", [Input("x"), Input("y")], [Output("z")], dtypes=dtypes)


def test_dtypes_are_stored_frozen_and_read_back_as_rows():
    ir = _ir(x=["DT_FLOAT16", "DT_FLOAT"], y=("DT_INT32",), z=("DT_FLOAT16", "DT_FLOAT"))
    assert ir.dtypes == (
        ("x", ("DT_FLOAT16", "DT_FLOAT")),
        ("y", ("DT_INT32",)),
        ("z", ("DT_FLOAT16", "DT_FLOAT")),
    )
    hash(ir)  # registrable, comparable
    assert ir.dtype_rows() == [
        {"x": "DT_FLOAT16", "y": "DT_INT32", "z": "DT_FLOAT16"},
        {"x": "DT_FLOAT", "y": "DT_INT32", "z": "DT_FLOAT"},
    ]
    assert ir != _ir(x=["DT_FLOAT"]) and IrDef("Op").dtype_rows() == []


@pytest.mark.parametrize(
    ("dtypes", "message"),
    [
        ({"w": ("DT_FLOAT",)}, "dtypes names 'w', no input or output"),
        ({"x": ("float16",)}, "must list GE enumerators such as DT_FLOAT16, got"),
        ({"x": ()}, "must list GE enumerators"),
        ({"x": ("DT_FLOAT",) * 2, "z": ("DT_FLOAT",) * 3}, "lengths [2, 3]"),
    ],
)
def test_dtypes_that_are_no_rows_are_refused(dtypes, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _ir(**dtypes)


def test_a_reg_op_s_sets_become_every_combination_a_shared_symbol_alike():
    """Sets of different lengths; equally long ones stay as they are (aligned, as CANN's
    headers write them, so its exports write them back unchanged)."""
    (op,) = read(
        'REG_OP(Cast2)\n.INPUT(x, "T")\n.INPUT(i, TensorType({DT_INT32, DT_INT64, DT_INT64}))\n'
        '.OUTPUT(y, "T")\n.DATATYPE(T, TensorType({DT_FLOAT, DT_FLOAT16}))\n'
        ".OP_END_FACTORY_REG(Cast2)"
    )
    (aligned,) = read(
        "REG_OP(A).INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))"
        ".OUTPUT(y, TensorType({DT_FLOAT, DT_FLOAT})).OP_END_FACTORY_REG(A)"
    )
    assert aligned.dtype_rows() == aligned.dtypes
    rows = IrDef("Cast2", op.ir.inputs, op.ir.outputs, dtypes=op.dtype_rows()).dtype_rows()
    assert {(r["x"], r["i"], r["y"]) for r in rows} == {
        (f, i, f) for f in ("DT_FLOAT", "DT_FLOAT16") for i in ("DT_INT32", "DT_INT64")
    }
    assert len(rows) == 4


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
