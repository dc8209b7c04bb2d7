// A planted op for `opsdk new --from-cann`: its InferShape (held_infershape.cpp) refuses
// the specs opsdk would guess from this definition alone (2-D tensors, axes of 2s, a
// one-value window, a grid's last dim that grows in dynamic mode, a bias like x); its
// scale is a host number GE hands InferShape as a 0-D tensor.
#include "register/op_def_registry.h"
namespace ops {
static const std::vector<ge::DataType> FLOATS = {ge::DT_FLOAT16, ge::DT_FLOAT};
static const std::vector<ge::DataType> INDICES = {ge::DT_INT64, ge::DT_INT64};
class Held : public OpDef {
public:
    explicit Held(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType(FLOATS);
        this->Input("grid").ParamType(REQUIRED).DataType(FLOATS);
        this->Input("axes").ParamType(REQUIRED).ValueDepend(REQUIRED).DataType(INDICES);
        this->Input("bias").ParamType(OPTIONAL).DataType(FLOATS);
        this->Input("scale").ParamType(REQUIRED).Scalar().DataType(FLOATS);
        this->Output("y").ParamType(REQUIRED).DataType(FLOATS);
        this->Attr("window").AttrType(REQUIRED).ListInt();
    }
};
OP_ADD(Held);
}  // namespace ops
