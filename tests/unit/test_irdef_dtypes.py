"""IrDef.dtypes: the data types a definition declares, kept with its IR (rows, like CANN's)."""

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
    assert ir.output_dtypes({"x": "DT_FLOAT"}) == {"z": {"DT_FLOAT"}}
    assert ir.output_dtypes({}) == {"z": {"DT_FLOAT16", "DT_FLOAT"}}
    assert ir.output_dtypes({"x": "DT_INT8"}) == {"z": set()}  # no row: the specs' business
    assert ir != _ir(x=["DT_FLOAT"]) and IrDef("Op").output_dtypes({}) == {}


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


def test_a_reg_op_s_sets_are_kept_as_sets_however_aligned_they_look():
    """GE checks each tensor of a REG_OP alone: ArgMaxD-like x float/half with y
    int32/int64 lets a float x give int64 (the aligned reading said int32 only, and the
    infer layer failed a correct op). Sets of different lengths are no error."""
    (op,) = read(
        "REG_OP(B).INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))"
        ".INPUT(i, TensorType({DT_INT32, DT_INT64, DT_INT8}))"
        ".OUTPUT(y, TensorType({DT_INT32, DT_INT64})).OP_END_FACTORY_REG(B)"
    )
    assert not op.rows
    dtypes = {n: v for n, v in op.dtypes.items() if v}
    sets = IrDef("B", op.ir.inputs, op.ir.outputs, dtypes=dtypes, dtype_sets=True)
    assert sets.output_dtypes({"x": "DT_FLOAT"}) == {"y": {"DT_INT32", "DT_INT64"}}
    with pytest.raises(ValueError, match="lengths"):  # the same lists read as rows
        IrDef("B", op.ir.inputs, op.ir.outputs, dtypes=dtypes)
    from opsdk import cann

    kept = cann.declared(sets)  # what its exports write: the sets as read
    assert (kept.dtypes, kept.rows) == (op.dtypes, False)
