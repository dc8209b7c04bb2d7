// The shape inference of TailAdd and TailAddPast: z is shaped as x.
#include "register/op_impl_registry.h"

namespace ops {
static ge::graphStatus InferShapeTailAdd(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_INFERSHAPE(TailAdd).InferShape(InferShapeTailAdd);
IMPL_OP_INFERSHAPE(TailAddPast).InferShape(InferShapeTailAdd);
}  // namespace ops
