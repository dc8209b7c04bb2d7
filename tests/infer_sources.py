"""The C++ inference the infer tests plant, each function written once: this project's
own sources in ops-nn's style (``IMPL_OP_INFERSHAPE`` in an ``op_host`` file), a correct
function beside each planted fault (a shape, a dtype, an unknown dim, a refusal, an output
count, a crash). :func:`infershape` puts the ones a test needs into one file.
"""

from __future__ import annotations

__all__ = ["BROKEN", "FUNCTIONS", "infershape"]


def _limited(name: str, limit: int, message: str) -> str:
    """An InferShape refusing a first dim over ``limit`` with ``message`` (given the dim)."""
    return f"""
static graphStatus InferShape{name}(gert::InferShapeContext* context)
{{
    const gert::Shape* x = context->GetInputShape(0);
    OP_CHECK_IF(x->GetDim(0) > {limit}, OP_LOGE(context, "{message}", x->GetDim(0)),
                return GRAPH_FAILED);
    *context->GetOutputShape(0) = *x;
    return GRAPH_SUCCESS;
}}"""


def _topk_dtype(bits: int) -> str:
    """An InferDataType typing a topk's values as its input and its indices int``bits``."""
    return f"""
static graphStatus InferDtypeTopKInt{bits}(gert::InferDataTypeContext* context)
{{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    context->SetOutputDataType(1, DT_INT{bits});
    return GRAPH_SUCCESS;
}}"""


FUNCTIONS = {
    # Keeps the reduced last dim as 1 (a fake dropping it disagrees).
    "InferShapeKeepLast": """
static graphStatus InferShapeKeepLast(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, x);
    gert::Shape* y = context->GetOutputShape(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, y);
    *y = *x;
    y->SetDim(x->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}""",
    "InferShapeDropLast": """
static graphStatus InferShapeDropLast(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    OP_CHECK_IF(x->GetDimNum() == 0, OP_LOGE(context, "x must have a dim"), return GRAPH_FAILED);
    y->SetDimNum(0);
    for (size_t i = 0; i + 1 < x->GetDimNum(); ++i) {
        y->AppendDim(x->GetDim(i));
    }
    return GRAPH_SUCCESS;
}""",
    "InferDtypeFloat": """
static graphStatus InferDtypeFloat(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, DT_FLOAT);
    return GRAPH_SUCCESS;
}""",
    "InferDtypeSame": """
static graphStatus InferDtypeSame(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}""",
    "InferShapeTopK": """
static graphStatus InferShapeTopK(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    const int64_t* k = context->GetAttrs()->GetInt(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, k);
    for (size_t out = 0; out < 2; ++out) {
        gert::Shape* y = context->GetOutputShape(out);
        *y = *x;
        y->SetDim(x->GetDimNum() - 1, *k);
    }
    return GRAPH_SUCCESS;
}""",
    # topk's indices as int32 (torch's are int64), and as int64.
    "InferDtypeTopKInt32": _topk_dtype(32),
    "InferDtypeTopKInt64": _topk_dtype(64),
    # Doubles the first dim: through uint32_t an unknown dim (-1) becomes 4294967294.
    "InferShapeDoubleUnsigned": """
static graphStatus InferShapeDoubleUnsigned(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    uint32_t rows = x->GetDim(0);
    y->SetDim(0, rows * 2U);
    return GRAPH_SUCCESS;
}""",
    "InferShapeDoubleSigned": """
static graphStatus InferShapeDoubleSigned(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    int64_t rows = x->GetDim(0);
    y->SetDim(0, rows < 0 ? -1 : rows * 2);
    return GRAPH_SUCCESS;
}""",
    # The last dim split in two halves, the first the larger: (d + 1) / 2 (-1 stays -1).
    "InferShapeFirstHalf": """
static graphStatus InferShapeFirstHalf(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    size_t last = x->GetDimNum() - 1;
    int64_t size = x->GetDim(last);
    y->SetDim(last, size < 0 ? -1 : (size + 1) / 2);
    return GRAPH_SUCCESS;
}""",
    # Refuses ranks over 4 (GE would fail to compile a 5-D graph).
    "InferShapeAtMost4D": """
static graphStatus InferShapeAtMost4D(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    OP_CHECK_IF(x->GetDimNum() > 4, OP_LOGE(context, "x has %zu dims, at most 4",
                x->GetDimNum()), return GRAPH_FAILED);
    *context->GetOutputShape(0) = *x;
    return GRAPH_SUCCESS;
}""",
    # Refuse a first dim over 4, over 1 (GRAPH_FAILED, with its log line).
    "InferShapeSmallOnly": _limited("SmallOnly", 4, "dim 0 is %ld, at most 4"),
    "InferShapeOneRow": _limited("OneRow", 1, "x has %ld rows, supports one"),
    # Infers a second output the op does not have.
    "InferShapeTwoOutputs": """
static graphStatus InferShapeTwoOutputs(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    gert::Shape* stats = context->GetOutputShape(1);
    OP_CHECK_NULL_WITH_CONTEXT(context, stats);
    *y = *x;
    *stats = *x;
    return GRAPH_SUCCESS;
}""",
    # Reads its optional input without asking whether it is there: absent, a null deref.
    "InferShapeUnguarded": """
static graphStatus InferShapeUnguarded(gert::InferShapeContext* context)
{
    const gert::Shape* bias = context->GetOptionalInputShape(1);
    gert::Shape* y = context->GetOutputShape(0);
    *y = *context->GetInputShape(0);
    y->SetDim(0, bias->GetDim(0));
    return GRAPH_SUCCESS;
}""",
}

# Asks the context for what an InferShapeContext does not have: does not compile (line 5).
BROKEN = r"""
#include "register/op_impl_registry.h"
static ge::graphStatus InferShapeBroken(gert::InferShapeContext* context)
{
    return context->GetPlatformInfo() == nullptr ? ge::GRAPH_FAILED : ge::GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(Broken).InferShape(InferShapeBroken);
"""


def infershape(functions: list[str], registrations: str, includes: tuple[str, ...] = ()) -> str:
    """An ops-nn style infershape file: ``functions`` (names in :data:`FUNCTIONS`, or C++
    text of a test's own), then ``registrations`` (its ``IMPL_OP_INFERSHAPE`` lines)."""
    lines = ['#include "register/op_impl_registry.h"', '#include "log/log.h"']
    lines += [f'#include "{name}"' for name in includes]
    lines += ["", "using namespace ge;", "namespace ops {"]
    lines += [FUNCTIONS.get(f, f) for f in functions]
    lines += ["", registrations.strip(), "}  // namespace ops", ""]
    return "\n".join(lines)
