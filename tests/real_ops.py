"""Real CANN ops from the torch-npu wheel, read at test time (never committed)."""

import ast
import functools

from opsdk.offline import locator

RAW_OPS = "dynamo/torchair/_ge_concrete_graph/auto_generated_ge_raw_ops.py"


@functools.cache
def _docstrings() -> dict[str, str]:
    tree = ast.parse(locator.torch_npu_file(RAW_OPS).read_text())
    return {f.name: ast.get_docstring(f) or "" for f in tree.body if isinstance(f, ast.FunctionDef)}


def prototype(op_type: str) -> str:
    """CANN's ``REG_OP(op_type)`` prototype, as TorchAir's generated GE API documents it."""
    return _docstrings()[op_type]
