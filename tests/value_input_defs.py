"""CANN definitions with value inputs, for the readers' and the packages' tests."""

INTS = "{ge::DT_INT32, ge::DT_INT64}"


FLOATS = "{ge::DT_FLOAT, ge::DT_FLOAT}"


def value_opdef(inputs: str, name: str = "Vd") -> str:
    return f"""#include "register/op_def_registry.h"
namespace ops {{
class {name} : public OpDef {{
public:
    explicit {name}(const char* name) : OpDef(name)
    {{
        this->Input("x").DataType({FLOATS}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});
{inputs}
        this->Output("y").DataType({FLOATS}).Format({{ge::FORMAT_ND, ge::FORMAT_ND}});
        this->Attr("mode").AttrType(OPTIONAL).Int(0);
    }}
}};
OP_ADD({name});
}}
"""


def value_input(name, types=INTS, extra=".ValueDepend(OPTIONAL)"):
    return f'        this->Input("{name}"){extra}.DataType({types});\n'
