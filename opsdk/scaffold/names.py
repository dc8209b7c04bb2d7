"""What an op package may be called: a name that imports the package and nothing else.

`opsdk check` imports the package by name, its folder first on ``sys.path``. A name that
is already a module (the standard library's, torch, opsdk, what opsdk loads, anything
installed here) imports that module instead when it is loaded already (``opsdk new os``,
then ``os declares no OPS``), or shadows it for every importer in the process. The
project's own layout takes two more names.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from opsdk.errors import ScaffoldError

__all__ = ["refuse_shadowing"]

# What opsdk imports beyond installed distributions: torch_npu (an NPU host's, or opsdk's
# stand-in), and TorchAir and npugraph_ex, which come out of the torch-npu wheel.
_OPSDK_IMPORTS = frozenset({"torch", "opsdk", "torch_npu", "torchair", "npugraph_ex"})
# What the project folder holds beside the package, by name.
_LAYOUT = {
    "tests": "the name of the project's tests/ folder",
    "conftest": "the module pytest makes of the project's tests/conftest.py",
}
# Where a fresh interpreter of this environment finds ``argv[1]``: what `opsdk check`
# (a console script, which does not search the working directory) would import.
_FIND = """
import importlib.util, json, sys
sys.path = [p for p in sys.path if p]
found = importlib.util.find_spec(sys.argv[1])
print(json.dumps(found and [found.origin, *(found.submodule_search_locations or ())]))
"""


def refuse_shadowing(name: str, project: Path, fix: str) -> None:
    """Refuse the package name ``name`` of the project ``project`` when another module
    answers to it; ``fix`` says how to choose another. A module found inside ``project``
    is this package itself, installed (regenerated with --force)."""
    if name in _LAYOUT:
        taken = _LAYOUT[name]
    elif name in sys.stdlib_module_names:
        taken = f"a module of Python's standard library (import {name} would not import it)"
    elif name in _OPSDK_IMPORTS:
        taken = "a module opsdk imports"
    else:
        where = _importable(name, project)
        if where is None:
            return
        taken = f"importable here already ({where}), which the package would shadow"
    raise ScaffoldError(f"package name {name!r} is {taken}: {fix} (e.g. {name}_op)")


def _importable(name: str, project: Path) -> str | None:
    """Where this environment imports ``name`` from (None: nowhere, or only from inside
    ``project``), asked of a fresh interpreter: this process's ``sys.path`` has what
    opsdk and its caller (pytest) added."""
    done = subprocess.run(
        [sys.executable, "-c", _FIND, name], capture_output=True, text=True, timeout=60
    )
    lines = done.stdout.splitlines() if done.returncode == 0 else ()
    found = json.loads(lines[-1]) if lines else None
    places = [Path(p) for p in found or () if p]
    inside = project.resolve()
    outside = [p for p in places if not p.resolve().is_relative_to(inside)]
    return str(outside[0]) if outside else None
