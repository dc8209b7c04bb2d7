"""Generated op packages for the benchmarks, made with `opsdk new` like a user's."""

from __future__ import annotations

from pathlib import Path

from opsdk.axes import DEFAULT_STYLE
from opsdk.scaffold import NewRequest, new

NAMESPACE = "opsdk_bench"


def generate_library(root: Path, count: int, style: str = DEFAULT_STYLE) -> str:
    """``count`` scaffolded add ops (alternately in-place and not) under ``root`` plus one
    importable module, returned by name, whose ``OPS`` holds them all: the shape of
    an op library that `opsdk check` runs in one process."""
    names = []
    for i in range(count):
        name = f"bench_op_{i}"
        new(NewRequest(name, inplace=i % 2 == 1, namespace=NAMESPACE, style=style, out=root))
        names.append(name)
    library = f"bench_library_{count}"
    (root / f"{library}.py").write_text(
        '"""All benchmark ops in one module, as `opsdk check` targets take them."""\n\n'
        "import importlib\nimport sys\nfrom pathlib import Path\n\n"
        "_ROOT = Path(__file__).parent\n"
        f"_NAMES = {names!r}\n"
        "sys.path[:0] = [str(_ROOT / name) for name in _NAMES]\n"
        "OPS = tuple(op for name in _NAMES for op in importlib.import_module(name).OPS)\n"
    )
    return library


def generate_style(root: Path, style: str) -> Path:
    """One out-of-place add op in ``style``: its project directory."""
    return new(NewRequest(f"bench_add_{style}", namespace=NAMESPACE, style=style, out=root)).path
