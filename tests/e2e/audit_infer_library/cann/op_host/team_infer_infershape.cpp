// The team's C++ shape inference of its ops (ops-nn style: IMPL_OP_INFERSHAPE).
#include "register/op_impl_registry.h"
#include "log/log.h"

using namespace ge;
namespace ops {
static graphStatus InferShapeKeepLast(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    OP_CHECK_NULL_WITH_CONTEXT(context, y);
    *y = *x;
    y->SetDim(x->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}

static graphStatus InferShapeDropLast(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    for (size_t i = 0; i + 1 < x->GetDimNum(); ++i) {
        y->AppendDim(x->GetDim(i));
    }
    return GRAPH_SUCCESS;
}

static graphStatus InferShapeSame(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}

static graphStatus InferDtypeSame(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}

static graphStatus InferDtypeFloat(gert::InferDataTypeContext* context)
{
    context->SetOutputDataType(0, DT_FLOAT);
    return GRAPH_SUCCESS;
}

static graphStatus InferShapeResizeTo(gert::InferShapeContext* context)
{
    const gert::Tensor* size = context->GetInputTensor(1);
    OP_CHECK_IF(size == nullptr, OP_LOGE(context, "size has no data"), return GRAPH_FAILED);
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    for (int64_t i = 0; i < size->GetShapeSize(); ++i) {
        y->AppendDim(size->GetData<int64_t>()[i]);
    }
    return GRAPH_SUCCESS;
}

static graphStatus InferShapeOneRow(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    OP_CHECK_IF(x->GetDim(0) > 1, OP_LOGE(context, "x has %ld rows, supports one", x->GetDim(0)),
                return GRAPH_FAILED);
    *context->GetOutputShape(0) = *x;
    return GRAPH_SUCCESS;
}

IMPL_OP_INFERSHAPE(RowSum).InferShape(InferShapeKeepLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(RowMean).InferShape(InferShapeDropLast).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(ToFloat).InferShape(InferShapeSame).InferDataType(InferDtypeFloat);
IMPL_OP_INFERSHAPE(ResizeTo).InferShape(InferShapeResizeTo).InferDataType(InferDtypeSame);
IMPL_OP_INFERSHAPE(OneRow).InferShape(InferShapeOneRow).InferDataType(InferDtypeSame);
}  // namespace ops
