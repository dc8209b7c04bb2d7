"""Reading the graphs TorchAir builds: where the op is in the post-AOT FX graph, which
FX inputs each GE ``Data`` carries, and the dtype of a symbolic scalar's host input.

The ``ge`` column's checks and the pictures of a cell's graphs
(:mod:`opsdk.harness.graph_hook`) read the graphs the same way.
"""

from __future__ import annotations

import torch

__all__ = ["SYM_DTYPES", "fx_inputs", "op_arguments"]

# The GE dtype TorchAir gives a symbolic scalar's host input (its sym_to_ge_dtype).
SYM_DTYPES = {torch.SymInt: "DT_INT64", torch.SymFloat: "DT_FLOAT", torch.SymBool: "DT_BOOL"}


def fx_inputs(graph, data) -> list[int]:
    """The FX graph inputs (placeholder indexes) a GE ``Data`` carries: one, or several
    symbols packed into one host list. TorchAir records them per Data in its private
    ``_GeInputInfo.func``; checked against torch-npu 2.13.0."""
    func = getattr(graph.named_inputs_info.get(data.name), "func", None)
    index = getattr(func, "fx_input_idx", None)
    return [index] if index is not None else list(getattr(func, "fx_input_idx_list", []))


def op_arguments(node, spec) -> dict | None:
    """The op's arguments by name at an FX node that calls it (directly, or through
    auto-functionalization for an in-place op); None for any other node."""
    from torch._higher_order_ops import auto_functionalize

    if node.target == spec.op():
        return spec.by_name(node.args, node.kwargs)
    wrappers = (auto_functionalize.auto_functionalized, auto_functionalize.auto_functionalized_v2)
    if node.target in wrappers and node.args and node.args[0] == spec.op():
        return {k: v for k, v in node.kwargs.items() if not k.startswith("_")}
    return None
