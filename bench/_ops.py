"""Generated op packages for the benchmarks, made with `opsdk new` like a user's."""

from __future__ import annotations

from pathlib import Path

from opsdk.axes import DEFAULT_STYLE
from opsdk.scaffold import NewRequest, new

NAMESPACE = "opsdk_bench"


# The libraries a benchmark can generate: which of their ops write an input in place.
LIBRARIES = {
    "default": lambda i: False,  # what `opsdk new NAME` makes: out-of-place ops
    "mixed": lambda i: i % 2 == 1,  # alternately in-place and not
}


def generate_library(
    root: Path, count: int, style: str = DEFAULT_STYLE, library: str = "mixed"
) -> str:
    """``count`` scaffolded add ops under ``root`` (``library``: which write in place,
    see :data:`LIBRARIES`) plus one importable module, returned by name, whose ``OPS``
    holds them all: the shape of an op library that `opsdk check` runs in one process."""
    inplace = LIBRARIES[library]
    names = []
    for i in range(count):
        name = f"bench_op_{i}"
        new(NewRequest(name, inplace=inplace(i), namespace=NAMESPACE, style=style, out=root))
        names.append(name)
    module = f"bench_library_{count}"
    (root / f"{module}.py").write_text(
        '"""All benchmark ops in one module, as `opsdk check` targets take them."""\n\n'
        "import importlib\nimport sys\nfrom pathlib import Path\n\n"
        "_ROOT = Path(__file__).parent\n"
        f"_NAMES = {names!r}\n"
        "sys.path[:0] = [str(_ROOT / name) for name in _NAMES]\n"
        "OPS = tuple(op for name in _NAMES for op in importlib.import_module(name).OPS)\n"
    )
    return module


def generate_style(root: Path, style: str) -> Path:
    """One out-of-place add op in ``style``: its project directory."""
    return new(NewRequest(f"bench_add_{style}", namespace=NAMESPACE, style=style, out=root)).path
