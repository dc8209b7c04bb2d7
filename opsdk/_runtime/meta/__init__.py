"""Helpers for fake (meta) functions registered with ``torch.library.register_fake``.

A fake function says what an op returns without computing it: shapes, dtypes,
devices. Getting it wrong is the most common reason a custom op breaks under
``torch.compile``; these helpers cover the usual op families and stay correct
with symbolic (SymInt) shapes, so the same fake works for static and dynamic
graphs. Each follows the matching torch op (its output has the shape and dtype the
real op gives) and refuses, with ``torch._check``, the inputs the real kernel
refuses, so a bad call fails while tracing rather than on the device. Every
output is contiguous, as an aclnn kernel's is, whatever the inputs' layouts
(the contract the harness checks: :mod:`opsdk.harness.core.layout`).

=====================  ===================================================
family                 helpers
=====================  ===================================================
same as an input       :func:`same_as`
elementwise            :func:`elementwise`, :func:`broadcast_shape`
reductions             :func:`reduction`
matrix products        :func:`mm`, :func:`bmm`, :func:`matmul`
joining                :func:`cat`, :func:`stack`
indexing               :func:`index_select`, :func:`gather`
data-dependent sizes   :func:`dynamic_size`, :func:`nonzero`, :func:`masked_select`
in place               :func:`inplace`
contiguous outputs     :func:`contiguous`
=====================  ===================================================
"""

from ._dynamic import dynamic_size, masked_select, nonzero
from ._index import gather, index_select
from ._join import cat, stack
from ._layout import contiguous
from ._matmul import bmm, matmul, mm
from ._pointwise import broadcast_shape, elementwise, inplace, same_as
from ._reduce import reduction

__all__ = [
    "bmm",
    "broadcast_shape",
    "cat",
    "contiguous",
    "dynamic_size",
    "elementwise",
    "gather",
    "index_select",
    "inplace",
    "masked_select",
    "matmul",
    "mm",
    "nonzero",
    "reduction",
    "same_as",
    "stack",
]
