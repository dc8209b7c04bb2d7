// The planted op's InferShape: what the C++ requires that its definition does not say.
#include "register/op_impl_registry.h"
using namespace ge;
namespace ops {
static graphStatus InferShapeHeld(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    const gert::Shape* grid = context->GetInputShape(1);
    // A rank: x and grid are 3-D (not the 2-D the definition hints).
    if (x->GetDimNum() != 3 || grid->GetDimNum() != 3) {
        return GRAPH_FAILED;
    }
    // A fixed dim: grid's last dim is a pair (-1, unknown at compile time, is refused).
    if (grid->GetDim(2) != 2) {
        return GRAPH_FAILED;
    }
    // A value input: axes are dims of x, each once (GE gives no data when it is unknown).
    const gert::Tensor* axes = context->GetInputTensor(2);
    if (axes != nullptr) {
        int64_t count = axes->GetShapeSize();
        const int64_t* dims = axes->GetData<int64_t>();
        for (int64_t i = 0; i < count; ++i) {
            if (dims[i] < 0 || dims[i] >= 3) {
                return GRAPH_FAILED;
            }
            for (int64_t j = 0; j < i; ++j) {
                if (dims[j] == dims[i]) {
                    return GRAPH_FAILED;
                }
            }
        }
    }
    // An attr list: the window is a pair.
    const gert::TypedContinuousVector<int64_t>* window = context->GetAttrs()->GetListInt(0);
    if (window == nullptr || window->GetSize() != 2) {
        return GRAPH_FAILED;
    }
    // An optional input: one bias per x's last dim.
    const gert::Shape* bias = context->GetOptionalInputShape(3);
    if (bias != nullptr && (bias->GetDimNum() != 1 || bias->GetDim(0) != x->GetDim(2))) {
        return GRAPH_FAILED;
    }
    // A host number: the scale reaches InferShape as a 0-D tensor.
    const gert::Shape* scale = context->GetRequiredInputShape(4);
    if (scale == nullptr || scale->GetDimNum() != 0) {
        return GRAPH_FAILED;
    }
    gert::Shape* y = context->GetOutputShape(0);
    *y = *x;
    y->SetDim(1, grid->GetDim(1));
    return GRAPH_SUCCESS;
}
IMPL_OP_INFERSHAPE(Held).InferShape(InferShapeHeld);
}  // namespace ops
