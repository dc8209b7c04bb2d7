"""`opsdk new --from-cann op_host/<op>_def.cpp`: an AscendC project's OpDef in, a package out,
and `opsdk ir --format opdef` writing the OpDef back."""

from opsdk import cann

# An in-place op with an optional input and attrs, written as CANN's op repositories write
# their op_host files: file constants, a per-chip config, comments.
OPDEF = """\
#include "register/op_def_registry.h"

namespace ops {
static const std::vector<ge::DataType> VALUE_TYPES = {ge::DT_FLOAT, ge::DT_FLOAT16};
static const std::vector<ge::Format> FORMATS = {ge::FORMAT_ND, ge::FORMAT_ND};

class ScatterScale : public OpDef {
public:
    explicit ScatterScale(const char* name) : OpDef(name)
    {
        this->Input("var").ParamType(REQUIRED).DataType(VALUE_TYPES).Format(FORMATS);
        this->Input("indices").ParamType(REQUIRED).DataType({ge::DT_INT64, ge::DT_INT64})
            .Format(FORMATS);
        this->Input("scale").ParamType(OPTIONAL).DataType(VALUE_TYPES).Format(FORMATS);
        this->Output("var").ParamType(REQUIRED).DataType(VALUE_TYPES).Format(FORMATS);  // ref
        this->Attr("axis").AttrType(OPTIONAL).Int(0);
        this->Attr("reduce").AttrType(OPTIONAL).String("none");

        OpAICoreConfig config;
        config.DynamicShapeSupportFlag(true).ExtendCfgInfo("opFile.value", "scatter_scale");
        this->AICore().SetTiling(optiling::TilingScatterScale).AddConfig("ascend910b", config);
    }
};

OP_ADD(ScatterScale);
}  // namespace ops
"""


def test_an_opdef_cpp_becomes_a_package_and_comes_back(opsdk_cli, tmp_path):
    source = tmp_path / "op_host" / "scatter_scale_def.cpp"
    source.parent.mkdir()
    source.write_text(OPDEF)
    run = opsdk_cli(
        "new", "scatter_scale", "--from-cann", source, "--namespace", "e2e_opdef", "--out", "out"
    )
    assert run.code == 0, run.stderr
    pkg = tmp_path / "out" / "scatter_scale"
    schema = (pkg / "scatter_scale" / "schema.py").read_text()
    assert "scatter_scale(Tensor(a!) var, Tensor indices, Tensor? scale, int axis=0, " in schema
    assert 'op_type="ScatterScale"' in (pkg / "scatter_scale" / "ir.py").read_text()
    assert "Support(F16(4, 4), I64(4, 4), None)" in (pkg / "scatter_scale" / "specs.py").read_text()

    run = opsdk_cli("ir", pkg, "--format", "opdef", "--out", tmp_path / "back")
    assert run.code == 0, run.stderr
    (back,) = cann.read(tmp_path / "back" / "scatter_scale_def.cpp")
    (op,) = cann.read(source)
    assert back.ir == op.ir
    # The package's specs carry the tensors' types (the optional input's are not fed).
    assert {n: back.dtypes[n] for n in ("var", "indices")} == {
        n: op.dtypes[n] for n in ("var", "indices")
    }
