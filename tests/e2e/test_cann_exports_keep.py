"""`opsdk ir` right after `opsdk new --from-cann`: the exports are the definition, unchanged.

The package's ir.py keeps what the definition says beyond GE's prototype (dtype rows incl.
types torch cannot compute, formats, ValueDepend options, chips, attr defaults), so no
export runs the fake function (no reference is written yet) or makes a fact up."""

import pytest

from opsdk import cann, cli
from opsdk.irdef import Input, IrDef, Output

# Made up, in CANN's OpDef layout: complex and float8 types, a 5-D format, an OPTIONAL
# ValueDepend, a chip other than opsdk's default pair, attrs with defaults (a dtype one).
OPDEF = """#include "register/op_def_registry.h"
namespace ops {
static const std::vector<ge::DataType> T = {ge::DT_FLOAT, ge::DT_COMPLEX64, ge::DT_FLOAT8_E5M2};
static const std::vector<ge::Format> F = {ge::FORMAT_NCDHW, ge::FORMAT_NCDHW, ge::FORMAT_ND};
class KeepMe : public OpDef {
public:
    explicit KeepMe(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType(T).Format(F);
        this->Input("axis").ParamType(REQUIRED).ValueDepend(OPTIONAL)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT32}).Format(F);
        this->Output("y").ParamType(REQUIRED).DataType(T).Format(F);
        this->Attr("exclusive").AttrType(OPTIONAL).Bool(true);
        this->Attr("dst").AttrType(OPTIONAL).Int(ge::DT_BF16);
        this->Attr("scales").AttrType(OPTIONAL).ListFloat({0.5, 2});
        this->AICore().AddConfig("ascend950");
    }
};
OP_ADD(KeepMe);
}
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    root = tmp_path_factory.mktemp("keep")
    source = root / "op_host" / "keep_me_def.cpp"
    source.parent.mkdir()
    source.write_text(OPDEF)
    argv = ["new", "--from-cann", str(source), "--namespace", "t_keep", "--out", str(root)]
    assert cli.main(argv) == 0
    return source, root / "keep_me"


def _exported(package, fmt, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / fmt
    assert cli.main(["ir", str(package), "--format", fmt, "--out", str(out)]) == 0, (
        capsys.readouterr().err
    )
    (path,) = out.iterdir()
    return path


def test_the_opdef_export_is_the_definition(package, tmp_path, capsys):
    source, pkg = package
    (op,) = cann.read(source)
    (back,) = cann.read(_exported(pkg, "opdef", tmp_path, capsys))
    assert back == op  # ir (ValueDepend OPTIONAL, attr defaults), dtypes, formats
    assert back.chips == op.chips == ("ascend950",)
    assert back.ir.inputs[1] == Input("axis", value_depend="optional")
    assert back.dtypes["x"] == ("DT_FLOAT", "DT_COMPLEX64", "DT_FLOAT8_E5M2")
    assert back.formats["x"] == ("NCDHW", "NCDHW", "ND")


def test_the_reg_op_export_keeps_every_type(package, tmp_path, capsys):
    source, pkg = package
    (op,) = cann.read(source)
    (back,) = cann.read(_exported(pkg, "reg_op", tmp_path, capsys))
    assert {n: set(d) for n, d in back.dtypes.items()} == {n: set(d) for n, d in op.dtypes.items()}
    assert back.ir.attrs == op.ir.attrs


def test_the_aclnn_export_needs_no_reference(package, tmp_path, capsys):
    text = _exported(package[1], "aclnn", tmp_path, capsys).read_text()
    assert "const aclIntArray *axis," in text


def test_msopgen_has_no_word_for_float8_and_says_which_formats_keep_it(package, capsys):
    capsys.readouterr()
    assert cli.main(["ir", str(package[1]), "--format", "msopgen"]) == 2
    err = capsys.readouterr().err
    assert "DT_FLOAT8_E5M2, which msopgen has no word for: export it as --format opdef" in err


def test_value_depend_is_false_or_cann_s_option():
    assert Input("a", value_depend=True) == Input("a", value_depend="required")
    with pytest.raises(ValueError, match="value_depend must be False or one of"):
        Input("a", value_depend="tiling")


def test_declared_expands_one_entry_rows_and_formats_must_align():
    ir = IrDef(
        "Op",
        [Input("x"), Input("k")],
        [Output("y")],
        dtypes={"x": ("DT_FLOAT", "DT_INT8"), "k": ("DT_INT64",)},
    )
    op = cann.declared(ir)
    assert op.dtypes == {"x": ("DT_FLOAT", "DT_INT8"), "k": ("DT_INT64",) * 2, "y": ()}
    assert op.formats["k"] == ("ND", "ND") and cann.declared(IrDef("Op")) is None
    with pytest.raises(ValueError, match=r"formats\['x'\] must align with its dtypes"):
        IrDef("Op", [Input("x")], dtypes={"x": ("DT_FLOAT",)}, formats={"x": ("ND", "ND")})
