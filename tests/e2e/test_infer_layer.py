"""Layer ``infer`` of the ``ge`` column: a ``--from-cann`` package's fake function held to
the op's own C++ InferShape / InferDataType (copied into the package), at GE's compile
(-1 dims) and at run (real sizes). Each planted disagreement fails there with both
results and the C++ function's file:line; the correct twins pass; eager and aot_eager
do not change; a C++ file that does not compile leaves the op ``not checked``."""

import re

import pytest
from infer_sources import BROKEN, infershape

OPDEF = """\
#include "register/op_def_registry.h"

namespace ops {{
class {op} : public OpDef {{
public:
    explicit {op}(const char* name) : OpDef(name)
    {{
        this->Input("x").ParamType(REQUIRED).DataType({{ge::DT_FLOAT16}}).Format({{ge::FORMAT_ND}});
{outputs}
{extra}
        this->AICore().AddConfig("ascend910b");
    }}
}};
OP_ADD({op});
}}  // namespace ops
"""
Y = (
    '        this->Output("y").ParamType(REQUIRED)'
    + ".DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});"
)
INDICES = Y.replace('"y"', '"indices"').replace("DT_FLOAT16}", "DT_INT64}")
K = '        this->Attr("k").AttrType(OPTIONAL).Int(2);'
# In place: x is its own output (written through a TensorMove, as the functional form lowers).
REF = Y.replace('"y"', '"x"')
# A value-depend input: its data reaches InferShape when GE has it (a Const, in static).
SIZES = (
    '        this->Input("sizes").ParamType(REQUIRED).ValueDepend(OPTIONAL)'
    + ".DataType({ge::DT_INT64}).Format({ge::FORMAT_ND});"
)
SAME = """
static graphStatus InferShapeSame(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}"""
SIZED = """
static graphStatus InferShapeSized(gert::InferShapeContext* context)
{
    const gert::Tensor* sizes = context->GetInputTensor(1);
    OP_CHECK_NULL_WITH_CONTEXT(context, sizes);
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    for (int64_t i = 0; i < sizes->GetShapeSize(); ++i) {
        y->AppendDim(sizes->GetData<int64_t>()[i]);
    }
    return GRAPH_SUCCESS;
}"""

# The project's shared inference file (ops-nn style), this project's own C++.
INFERSHAPE = infershape(
    [
        "InferShapeKeepLast",
        "InferShapeDropLast",
        "InferDtypeSame",
        "InferDtypeFloat",
        "InferShapeTopK",
        "InferDtypeTopKInt32",
        "InferShapeDoubleUnsigned",
        "InferShapeOneRow",
        "InferShapeTwoOutputs",
        "InferShapeUnguarded",
        SAME,
        SIZED,
        "InferShapeAtMost4D",
    ],
    """
IMPL_OP_INFERSHAPE(KeepLast).InferShape(InferShapeKeepLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(ReduceSum).InferShape(InferShapeKeepLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(DropLast).InferShape(InferShapeDropLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(ToFloat).InferShape(InferShapeDropLast).InferDataType(InferDtypeFloat);
IMPL_OP_INFERSHAPE(TopKLike).InferShape(InferShapeTopK).InferDataType(InferDtypeTopKInt32);
IMPL_OP_INFERSHAPE(Doubler).InferShape(InferShapeDoubleUnsigned);
IMPL_OP_INFERSHAPE(OneRow).InferShape(InferShapeOneRow);
IMPL_OP_INFERSHAPE(WithStats).InferShape(InferShapeTwoOutputs);
IMPL_OP_INFERSHAPE(Unguarded).InferShape(InferShapeUnguarded);
IMPL_OP_INFERSHAPE(AddInPlace).InferShape(InferShapeSame);
IMPL_OP_INFERSHAPE(Sized).InferShape(InferShapeSized).InputsDataDependency({1});
IMPL_OP_INFERSHAPE(AtMost4D).InferShape(InferShapeAtMost4D).InferDataType(InferDtypeSame);
""",
)
# CANN samples style: the inference in the OpDef file itself (a correct one).
SAMPLE = OPDEF.replace(
    "namespace ops {{",
    """namespace ge {{
static graphStatus InferShape(gert::InferShapeContext* context)
{{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}}
}}

namespace ops {{""",
).replace("{extra}", "        this->SetInferShape(ge::InferShape);")

# op -> (outputs, extra OpDef lines, reference body, finding expected in static, dynamic)
OPS = {
    "KeepLast": (Y, "", "return x.sum(-1)", "shape", "shape"),
    "DropLast": (Y, "", "return x.sum(-1)", None, None),
    # named like a GE built-in: the package's own op runs, and reaches infer
    "ReduceSum": (Y, "", "return x.sum(-1)", "shape", "shape"),
    # its x reaches InferShape through TensorMove with the shape GE infers, not []
    "AddInPlace": (REF, "", "x.add_(1)", None, None),
    # static: a Const's data at compile; dynamic: a graph input's, which GE does not pass
    "Sized": (SIZES + "\n" + Y, "", "return x.new_zeros(sizes)", None, "nullptr"),
    "ToFloat": (Y, "", "return x.sum(-1)", "dtype", "dtype"),
    "TopKLike": (Y + "\n" + INDICES, K, "return tuple(torch.topk(x, k))", "dtype", "dtype"),
    # static cells: the exploration asks its dynamic form (-1 at symbolic dims) too
    "Doubler": (Y, "", "return torch.cat([x, x])", "explored-dynamic", "unknown-dim"),
    "OneRow": (Y, "", "return x.clone()", "failed", "failed"),
    "WithStats": (Y, "", "return x.clone()", "count", "count"),
    "Broken": (Y, "", "return x.clone()", None, None),
    "Unguarded": (Y, "", "return x.clone()", None, None),  # its C++ crashes: not checked
    "SampleCopy": (Y, None, "return x.clone()", None, None),
    # agrees on the declared 2-D case: the exploration meets a 5-D one (static cells)
    "AtMost4D": (Y, "", "return x.clone()", "explored", None),
    # no C++ inference: the OpDef's declared output dtype is what GE takes
    "DeclaredFloat": (
        Y.replace("DT_FLOAT16", "DT_FLOAT"),
        "",
        "return x.clone()",
        "declared",
        "declared",
    ),
}
VERDICTS = {
    "shape": "output 0: C++ [",
    "dtype": "likelier wrong: the fake",
    "unknown-dim": "unsigned arithmetic on -1",
    "failed": "x has 2 rows, supports one",
    "count": "C++ infers 2 outputs, fake returns 1",
    "declared": "output 0: C++ definition declares DT_FLOAT, fake DT_FLOAT16",
    "nullptr": "Sized: sizes is nullptr",
    "explored": "explored: C++ refuses on Support(F16(1, 1, 1, 1, 1)) (met first as Support(F16(",
    "explored-dynamic": "explored: differ on Support(F16(2)) (met first as Support(F16(2, 3))) in "
    "the dynamic form (-1 at each dim the fake keeps symbolic, as GE compiles it): output 0: C++ "
    "[4294967294], fake [-1] (likelier wrong: the C++: a dim no size can be (unsigned arithmetic",
}


def _stem(op: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", op).lower()


@pytest.fixture(scope="module")
def checked(tmp_path_factory, opsdk_cli_module):
    """The project made into a package, its references written, checked once in ge."""
    root = tmp_path_factory.mktemp("infer") / "InferOps"
    host = root / "op_host"
    host.mkdir(parents=True)
    for op, (outputs, extra, *_) in OPS.items():
        template = SAMPLE if extra is None else OPDEF
        text = template.format(op=op, outputs=outputs, extra=extra or "")
        (host / f"{_stem(op)}.cpp").write_text(text)
    (host / "infer_ops_infershape.cpp").write_text(INFERSHAPE)
    (host / "broken_infershape.cpp").write_text(BROKEN)
    out = root.parent / "out"
    run = opsdk_cli_module("new", "--from-cann", root, "--namespace", "inf", "--out", out)
    assert run.code == 0, run.stderr
    pkg = out / "infer_ops"
    for op, (*_, body, _static, _dynamic) in OPS.items():
        folder = pkg / "infer_ops" / _stem(op)
        folder = folder if folder.is_dir() else pkg / "infer_ops"
        kernels = folder / "kernels.py"
        text, count = re.subn(r"raise ImplementMe\(__file__, .*\)", body, kernels.read_text())
        assert count == 1, op
        kernels.write_text(text.replace("ImplementMe, ", ""))
    argv = ("--backend", "eager,aot_eager,ge", "--shapes", "static,dynamic", "--contexts", "none")
    run = opsdk_cli_module("check", pkg, *argv, json_report=True)
    cells = {
        (r["op"].split("::")[1].split(".")[0], r["column"], r["shapes"]): r for r in run.cells()
    }
    return pkg, cells


def test_the_package_holds_a_copy_of_its_inference_named_by_ir_py(checked):
    pkg, _ = checked
    copied = pkg / "infer_ops" / "keep_last" / "cann_infer" / "infer_ops_infershape.cpp"
    assert copied.read_text() == INFERSHAPE  # the user's C++ as it is, unformatted
    ir = (pkg / "infer_ops" / "keep_last" / "ir.py").read_text()
    assert 'infer_root=str(Path(__file__).with_name("cann_infer"))' in ir
    sample = pkg / "infer_ops" / "sample_copy" / "cann_infer" / "sample_copy.cpp"
    assert sample.is_file()


@pytest.mark.parametrize("op", sorted(OPS))
def test_each_planted_disagreement_fails_in_infer_and_each_twin_passes(checked, op):
    pkg, cells = checked
    *_, static, dynamic = OPS[op]
    for shapes, kind in (("static", static), ("dynamic", dynamic)):
        cell = cells[(_stem(op), "ge", shapes)]
        for backend in ("eager", "aot_eager"):  # the C++ is GE's business only
            assert cells[(_stem(op), backend, shapes)]["status"] == "pass"
        if kind is None:
            assert cell["status"] == "pass", cell["message"]
            continue
        assert (cell["status"], cell["layer"]) == ("fail", "infer"), cell["message"]
        message = cell["message"]
        assert VERDICTS[kind] in message, message
        if kind != "declared":  # the chip the C++ was asked as (the OpDef's AddConfig)
            explored = kind.startswith("explored")
            assert " as ascend910b" + (";" if explored else ", inputs ") in message
        if kind.startswith("explored"):  # the fake's file:line too
            assert re.search(r"\[fake \(\S*/fake\.py:\d+\)\]", message), message
        if kind == "failed":  # the C++ log line, in this package's copy
            assert f"{pkg}/infer_ops/{_stem(op)}/cann_infer/infer_ops_infershape.cpp:" in message
        where = r"C\+\+ Infer\w+ \(\S*cann_infer/infer_ops_infershape\.cpp:\d+\)"
        where = "ir.py \\(IrDef.dtypes\\)" if kind == "declared" else where
        assert re.search(where, message), message


def test_a_file_that_does_not_compile_leaves_its_op_not_checked_never_passed_silently(checked):
    _, cells = checked
    cell = cells[("broken", "ge", "static")]
    notes = [w for w in cell["warnings"] if "not checked" in w]
    assert len(notes) == 1 and "broken_infershape.cpp:5" in notes[0], cell["warnings"]
    assert "GetPlatformInfo" in notes[0]
    assert not any("not checked" in w for w in cells[("drop_last", "ge", "static")]["warnings"])


def test_an_infer_shape_that_crashes_leaves_its_op_not_checked_and_the_run_alive(checked):
    _, cells = checked
    for shapes in ("static", "dynamic"):
        notes = [w for w in cells[("unguarded", "ge", shapes)]["warnings"] if "not checked" in w]
        assert len(notes) == 1, cells[("unguarded", "ge", shapes)]["warnings"]
        assert "the InferShape crashed (signal 11: SIGSEGV) in InferShapeUnguarded (" in notes[0]
        assert "cann_infer/infer_ops_infershape.cpp:" in notes[0]
        assert "(inferring as ascend910b)" in notes[0]


def test_an_op_without_cpp_says_so_on_each_ge_cell_with_the_reason(checked):
    """DeclaredFloat's project registers no InferShape for it: nothing runs its C++, and
    each of its ge cells says so (the cells of an op whose C++ ran say nothing)."""
    _, cells = checked
    for shapes in ("static", "dynamic"):
        warned = cells[("declared_float", "ge", shapes)]["warnings"]
        notes = [w for w in warned if "not checked" in w]
        assert len(notes) == 1, warned
        assert (
            "no C++ InferShape of DeclaredFloat was found beside its CANN definition" in (notes[0])
        )
        assert not any("not checked" in w for w in cells[("keep_last", "ge", shapes)]["warnings"])
