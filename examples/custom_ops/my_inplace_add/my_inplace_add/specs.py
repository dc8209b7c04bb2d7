"""Input specs of the op: the inputs it supports, from which opsdk check derives its cases.

Each Support lists the op's arguments, tensors as dtype and sizes (F32(2, 3) is a
float32 tensor of 2x3; F32() is 0-dim). The harness adds a non-contiguous copy of
the first case and, in dynamic mode, grows the sizes between calls, each its own
way: name sizes that must stay related (Dim("m", 2); a + b for a concatenation).
Scalars vary between calls unless declared: Fixed(v), OneOf(v, w), Range(lo, hi).
"""

from opsdk.inputs import BF16, F16, F32, I32, Support, declare_supported

from .schema import OP

declare_supported(
    OP,
    [
        Support(F32(2, 3), F32(2, 3)),
        Support(F16(2, 3), F16(2, 3)),
        Support(BF16(2, 3), BF16(2, 3)),
        Support(I32(2, 3, value_range=(-100, 100)), I32(2, 3)),
        Support(F32(4, 3), F32(3)),  # broadcasting
        Support(F32(), F32()),  # 0-dim
        Support(F32(0, 3), F32(0, 3)),  # empty
    ],
    # tolerances={torch.bfloat16: (rtol, atol)} would loosen opsdk's defaults per dtype
)
