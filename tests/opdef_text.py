"""AscendC OpDef source text for the readers' tests, laid out as CANN's repositories do."""

from __future__ import annotations

from opsdk import cann

F16, F32, BF16 = "DT_FLOAT16", "DT_FLOAT", "DT_BF16"


def opdef(body: str, *, head: str = "", name: str = "MyOp", members: str = "") -> str:
    """An OpDef file around a constructor body, as CANN's repositories lay them out."""
    return f"""/**
 * Copyright notice of a made-up op: opsdk's test data.
 */
#include "register/op_def_registry.h"

namespace ops {{
{head}
class {name} : public OpDef {{
public:
    explicit {name}(const char* name) : OpDef(name)
    {{
{body}
    }}
{members}
}};

OP_ADD({name});
}}  // namespace ops
"""


def read_one(text: str, **kwargs):
    (op,) = cann.read(text, **kwargs)
    return op
