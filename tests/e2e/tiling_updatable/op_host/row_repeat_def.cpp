// RowRepeat: x repeated k times along its rows, k read on the host (made up, in CANN's
// OpDef layout).
#include "register/op_def_registry.h"
namespace ops {
class RowRepeat : public OpDef {
public:
    explicit RowRepeat(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16});
        this->Input("k").ParamType(REQUIRED).ValueDepend(REQUIRED).DataType({ge::DT_INT64, ge::DT_INT64});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16});
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(RowRepeat);
}  // namespace ops
