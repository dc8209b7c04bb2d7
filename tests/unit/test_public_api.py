"""The public API op packages may use, pinned (in the spirit of TorchAir's public-bindings test).

Generated op packages and the guides import these names; the implementation
behind them may move, the names may not. Removing or renaming one fails here;
adding one means adding it to this table on purpose.
"""

import importlib
import re
from pathlib import Path

import pytest

PUBLIC = {
    "opsdk": [
        "ImplementMe",
        "__version__",
        "BF16",
        "BOOL",
        "F16",
        "F32",
        "I8",
        "I32",
        "I64",
        "I16",
        "U8",
        "U64",
        "F64",
        "Support",
        "declare_supported",
    ],
    "opsdk.attach": ["define", "impl", "register_converter", "register_fake"],
    "opsdk.device": ["EMULATE_ENV", "NpuInfo", "ensure_npu"],
    "opsdk.irdef": ["Attr", "Input", "IrDef", "Output", "bind", "lookup", "register", "registered"],
    "opsdk.inputs": [
        "BF16",
        "BOOL",
        "F16",
        "F32",
        "I8",
        "I32",
        "I64",
        "I16",
        "U8",
        "U64",
        "F64",
        "Declaration",
        "Dim",
        "Fixed",
        "OneOf",
        "Range",
        "ScalarSpec",
        "Support",
        "TensorSpec",
        "declare_supported",
        "declared",
    ],
    "opsdk.meta": [
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
    ],
    "opsdk.converters": ["int32_input", "int64_input", "load_converters", "scalar_input"],
    "opsdk.oplib": ["import_added_ops"],
    "opsdk.cpp_build": ["load_library", "load_module", "reference"],
    "opsdk.fast_entry": ["traceable"],
    "opsdk.updatable": ["register_updatable"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module):
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(PUBLIC[module]), (
        f"{module}.__all__ changed: op packages import these names; keep them (the "
        "implementation may move) or update this pin on purpose"
    )
    missing = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert not missing, f"{module} lists {missing} in __all__ but does not define them"


def test_every_name_generated_packages_import_is_public():
    """Each ``from opsdk... import NAME`` in the generated examples names a pinned public
    name (or a public module, as in ``from opsdk import meta``)."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "custom_ops"
    found = set()
    for path in examples.rglob("*.py"):
        text = path.read_text()
        for module, names in re.findall(r"^from (opsdk[\w.]*) import ([\w, ]+)$", text, re.M):
            found.update((module, name.strip()) for name in names.split(","))
    assert found, "the examples import nothing from opsdk: the pattern is stale"
    private = sorted(
        f"{m}.{n}" for m, n in found if n not in PUBLIC.get(m, ()) and f"{m}.{n}" not in PUBLIC
    )
    assert not private, f"generated packages import names outside the public API: {private}"
