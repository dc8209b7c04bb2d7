"""The public API op packages may use, pinned (in the spirit of TorchAir's public-bindings test).

Generated op packages and the guides import these names; the implementation
behind them may move, the names may not. Removing or renaming one fails here;
adding one means adding it to this table on purpose. How each is called is pinned
too: every public callable's ``inspect.signature`` (a class's, and its public
methods' and properties'), each constant's value, and the pytest plugin's ini
options, flags and fixtures, against public_signatures.txt beside this file.
"""

import importlib
import inspect
import re
from pathlib import Path

import pytest
from public_modules import public_modules

from opsdk import pytest_plugin

SIGNATURES = Path(__file__).with_name("public_signatures.txt")

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
    "opsdk.patterns": ["BACKENDS", "fires", "fuses", "register"],
}


def test_every_public_module_is_pinned():
    assert sorted(PUBLIC) == sorted(public_modules())


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


def _described(qualname: str, obj) -> list[str]:
    """One line per callable way in: ``name(signature)``, a class's public methods and
    properties too; a constant's value (``__version__`` by its type: releases change it)."""
    if inspect.isclass(obj):
        lines = [f"class {qualname}{inspect.signature(obj)}"]
        for name, member in vars(obj).items():
            if name.startswith("_"):
                continue
            if isinstance(member, property):
                lines.append(f"{qualname}.{name}: property")
            elif callable(member) or isinstance(member, (classmethod, staticmethod)):
                lines.append(f"{qualname}.{name}{inspect.signature(getattr(obj, name))}")
        return lines
    if callable(obj):
        return [f"{qualname}{inspect.signature(obj)}"]
    if qualname.endswith(".__version__"):
        return [f"{qualname}: {type(obj).__name__}"]
    return [f"{qualname} = {obj!r}"]


class _Options:
    """Records what ``pytest_addoption`` declares (pytest's Parser and its group alike)."""

    def __init__(self):
        self.lines: list[str] = []

    def addini(self, name, help, type=None, default=None):
        self.lines.append(f"pytest ini {name} ({type or 'string'})")

    def getgroup(self, name):
        return self

    def addoption(self, *flags, **options):
        self.lines.append(f"pytest option {' '.join(flags)} ({options.get('action', 'value')})")


def _fixture(obj) -> bool:
    """Whether ``obj`` is a ``@pytest.fixture`` function (pytest >= 8.4, or older)."""
    return type(obj).__name__ == "FixtureFunctionDefinition" or hasattr(
        obj, "_pytestfixturefunction"
    )


def _plugin() -> list[str]:
    """The pytest plugin's public face: its ini options, flags and fixtures."""
    options = _Options()
    pytest_plugin.pytest_addoption(options)
    fixtures = [
        f"pytest fixture {name}" for name, obj in vars(pytest_plugin).items() if _fixture(obj)
    ]
    return options.lines + fixtures


def _public_signatures() -> list[str]:
    lines = []
    for module in sorted(PUBLIC):
        mod = importlib.import_module(module)
        for name in sorted(mod.__all__):
            lines += _described(f"{module}.{name}", getattr(mod, name))
    return lines + _plugin()


def test_public_signatures_are_pinned():
    """A changed signature, default, constant or plugin option fails here: op packages
    and their pytest configuration use them. Keep it, or change public_signatures.txt
    (the lines below) on purpose."""
    pinned = SIGNATURES.read_text().splitlines()
    now = _public_signatures()
    gone = [line for line in pinned if line not in now]
    new = [line for line in now if line not in pinned]
    assert not gone and not new, "public API changed:\n" + "\n".join(
        [f"- {line}" for line in gone] + [f"+ {line}" for line in new]
    )


def test_a_changed_default_is_a_changed_signature():
    def before(x, *, dtype=None): ...

    def after(x, *, dtype=float): ...

    assert _described("m.f", before) != _described("m.f", after)
