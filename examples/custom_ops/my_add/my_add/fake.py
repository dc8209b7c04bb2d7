"""Fake function of the op: output shapes and dtypes, no data.

torch.compile traces the op with fake tensors (and symbolic sizes when shapes
are dynamic); this function tells it what the op returns: contiguous tensors, as
the kernel's outputs are. opsdk.meta has helpers for the common op families that
stay correct with symbolic sizes (``torch.empty_like(x)`` would keep ``x``'s layout).
"""

import torch
from opsdk import meta

from .schema import my_add


@my_add.register_fake
def my_add_fake(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """What the op returns, from its inputs' metadata alone."""
    return meta.elementwise(x, y)
