"""The spec sizes ``--from-cann`` writes: ranks from the definition's formats, held to the
op's own C++ InferShape where it has one (a grid whose last dim must be 2, a 5-D input),
first guess kept and said when InferShape accepts none of the candidates."""

import pytest

from opsdk import cann
from opsdk._runtime import spec
from opsdk.cann import held, sizes
from opsdk.cann.specs import REFUSED, cases
from opsdk.scaffold import NewRequest, new
from opsdk.scaffold.cann_torch import torch_side


def _opdef(x_format: str = "ND", grid_format: str = "ND") -> str:
    return f"""#include "register/op_def_registry.h"
namespace ops {{
class Gs : public OpDef {{
public:
    explicit Gs(const char* name) : OpDef(name)
    {{
        this->Input("x").DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_{x_format}}});
        this->Input("grid").DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_{grid_format}}});
        this->Output("y").DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_{x_format}}});
    }}
}};
OP_ADD(Gs);
}}
"""


def _first_case(text: str, accepts=None) -> str:
    (op,) = cann.read(text)
    side = torch_side(op)
    return cases(spec.parse(f"t::gs{side.schema}"), side.ir, op, accepts)[0]


def test_a_format_fixes_its_tensor_s_rank_and_no_infershape_keeps_the_guess():
    assert _first_case(_opdef("NCHW")) == "Support(F32(4, 4, 4, 4), F32(4, 4, 4, 4))"
    assert _first_case(_opdef("NCDHW", "ND")) == "Support(F32(4, 4, 4, 4, 4), F32(4, 4, 4, 4, 4))"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            lambda s: s["grid"][-1] == 2,
            "Support(F32(4, 4, 4, 4), F32(4, 4, 4, 2, static_dims=(3,)))",
        ),
        (lambda s: len(s["x"]) == 4 and len(s["grid"]) == 1, "Support(F32(4, 4, 4, 4), F32(4))"),
        (lambda s: True, "Support(F32(4, 4, 4, 4), F32(4, 4, 4, 4))"),
    ],
)
def test_the_first_candidate_infershape_accepts_is_written(rule, expected):
    asked = []

    def accepts(shapes, values, dtypes):
        asked.append(shapes)
        return rule(shapes)

    assert _first_case(_opdef("NCHW"), accepts) == expected
    assert len(asked) <= held.LIMIT


def test_other_ranks_are_tried_for_tensors_no_format_fixes():
    chosen = sizes.choose(
        cann.read(_opdef())[0], ["x", "grid"], lambda shapes, rank: len(shapes["x"]) == 5
    )
    assert (chosen.shapes, chosen.accepted, chosen.rank) == (
        {"x": (4,) * 5, "grid": (4,) * 5},
        True,
        5,
    )


def test_when_infershape_accepts_nothing_the_guess_stays_and_the_file_says_so():
    refused = _first_case(_opdef("NCHW"), lambda shapes, values, dtypes: False)
    assert refused.endswith("Support(F32(4, 4, 4, 4), F32(4, 4, 4, 4))")
    said = " ".join(line.lstrip("# ") for line in refused.splitlines()[:-1])
    assert said == REFUSED
    assert REFUSED.split()[0] not in _first_case(
        _opdef("NCHW"), lambda shapes, values, dtypes: True
    )


# The op's own InferShape, ops-nn style, beside its OpDef: a grid's last dim must be 2.
INFERSHAPE = r"""
#include "register/op_impl_registry.h"
using namespace ge;
namespace ops {
static graphStatus InferShapeGs(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    const gert::Shape* grid = context->GetInputShape(1);
    if (x->GetDimNum() != 4 || grid->GetDimNum() != 4 || grid->GetDim(3) != 2) {
        return GRAPH_FAILED;
    }
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    y->SetDim(2, grid->GetDim(1));
    y->SetDim(3, grid->GetDim(2));
    return GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(Gs).InferShape(InferShapeGs);
}
"""


def test_opsdk_new_asks_the_op_s_compiled_infershape(tmp_path):
    source = tmp_path / "op_host" / "gs_def.cpp"
    source.parent.mkdir()
    source.write_text(_opdef())
    (source.parent / "gs_infershape.cpp").write_text(INFERSHAPE)
    pkg = new(NewRequest("gs", namespace="t_gs", out=tmp_path / "out", from_cann=source)).path
    specs = (pkg / "gs" / "specs.py").read_text()
    assert "Support(F32(4, 4, 4, 4), F32(4, 4, 4, 2, static_dims=(3,)))" in specs


# The shape of ops-math's Pows kernel (written here, not copied): x2 bound to a GlobalTensor
# read only as its element 0; x1 copied in blocks.
_POWS_KERNEL = """
template <typename T> class PowsBase {
    GlobalTensor<T> x1Gm, x2Gm, yGm;  // x2Gm[0] is the exponent
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y) {
        x1Gm.SetGlobalBuffer((__gm__ T*)x1);
        x2Gm.SetGlobalBuffer((__gm__ T*)x2);
        yGm.SetGlobalBuffer((__gm__ T*)y);
    }
    __aicore__ inline void Process() {
        DataCopy(ubX1, x1Gm[offset], length);
        this->scalar = this->x2Gm.GetValue(0);
    }
};
"""


def test_an_input_the_kernel_reads_one_element_of_is_sized_1_in_the_cases(tmp_path):
    """The trial's Pows: its definition gives x2 x1's dtypes and says nothing of its shape
    (no InferShape); its kernel reads x2 as one value: the cases give it (1,), not x1's."""
    import dataclasses

    from opsdk.cann.kernel.scalars import one_element

    kernels = tmp_path / "op_kernel"
    kernels.mkdir()
    (kernels / "pows_base.h").write_text(_POWS_KERNEL)
    assert one_element(kernels, ["x1", "x2"]) == {"x2"}
    (kernels / "pows_more.h").write_text("void f() { DataCopy(ub, x2Gm[8], 16); }\n")
    assert one_element(kernels, ["x1", "x2"]) == set()  # read as a block too: a tensor
    (op,) = cann.read(_opdef())
    side = torch_side(op)
    scalar = dataclasses.replace(op, scalars=frozenset({"grid"}))
    assert cases(spec.parse(f"t::gs{side.schema}"), side.ir, scalar, None)[0] == (
        "Support(F32(4, 4), F32(1))"
    )


def test_ops_math_pows_kernel_reads_x2_as_one_element(tmp_path_factory):
    import mirrors

    from opsdk.cann.kernel.scalars import one_element

    root = mirrors.extract(tmp_path_factory, "hicann+ops-math", "math/pows/op_kernel")
    assert one_element(root / "math/pows/op_kernel", ["x1", "x2"]) == {"x2"}
