#ifndef TEAM_OPS_SCALE_ADD_PROTO_H_
#define TEAM_OPS_SCALE_ADD_PROTO_H_

#include "graph/operator_reg.h"

namespace ge {
/**
* @brief z = x + alpha * y
*/
REG_OP(ScaleAdd)
    .INPUT(x, TensorType({DT_FLOAT16, DT_FLOAT, DT_BF16}))
    .INPUT(y, TensorType({DT_FLOAT16, DT_FLOAT, DT_BF16}))
    .OUTPUT(z, TensorType({DT_FLOAT16, DT_FLOAT, DT_BF16}))
    .ATTR(alpha, Float, 1.0)
    .OP_END_FACTORY_REG(ScaleAdd)
}  // namespace ge

#endif  // TEAM_OPS_SCALE_ADD_PROTO_H_
