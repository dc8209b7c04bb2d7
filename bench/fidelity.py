"""How much of the offline ge + npugraph_ex path is real torch_npu / TorchAir code.

Runs ``opsdk check PACKAGE --backend ge,npugraph_ex`` in this process under
coverage.py and counts, per file, the distinct lines executed inside function bodies
after imports: TorchAir, npugraph_ex and torch_npu are imported first, then coverage
starts; a line of module or class scope (what an import runs) is not counted even
when a lazy import runs it later. Real: files of the torch-npu wheel (the offline
cache). Stand-in: opsdk's stand-ins for native layers and their bring-up
(:data:`STANDINS`). The figure is real / (real +
stand-in); opsdk's harness and torch itself are neither and are not counted.

    python bench/fidelity.py [PACKAGE ...] [--top 15]

PACKAGE defaults to the examples my_add and my_inplace_add. Needs ``coverage``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import io
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "custom_ops"
DEFAULT_PACKAGES = (EXAMPLES / "my_add", EXAMPLES / "my_inplace_add")
OPSDK = REPO / "opsdk"
# The stand-ins: the emulated npu device (with torch_npu._C and its install), the wheel
# locator and the patches, under the runtime; TorchAir's native side and its bring-up.
STANDINS = tuple(
    OPSDK / part
    for part in ("_runtime/npu", "_runtime/locator.py", "_runtime/patches.py", "offline")
)
# What each stand-in file stands in for, by path under opsdk/ (first match), and whether
# that is a native layer (C++/CANN: what offline must stand in).
PARTS = {
    "_runtime/npu/native.py": ("torch_npu._C (native)", True),
    "_runtime/npu/capture.py": ("torch_npu._C (native)", True),
    "_runtime/npu/streams.py": ("torch_npu._C (native)", True),
    "_runtime/npu/torch_npu.py": ("torch_npu install", False),
    "_runtime/npu/": ("the npu device (CANN kernels, native)", True),
    "offline/ge/": ("TorchAir's _torchair and GE (native)", True),
    "": ("opsdk bring-up and patches", False),
}


def _is_standin(path: str) -> bool:
    return any(Path(path).is_relative_to(root) for root in STANDINS)


@functools.cache
def function_lines(path: str) -> frozenset[int]:
    """Lines of ``path`` inside a function body (what runs after imports)."""
    tree = ast.parse(Path(path).read_text(), path)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            for stmt in body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(lines)


def _import_stack() -> Path:
    """Import what an NPU host has imported before user code runs; the wheel's root."""
    from opsdk._runtime import locator
    from opsdk.offline import torchair as bringup

    bringup.import_npugraph_ex()
    bringup.torchair_with_converters()
    bringup.install()
    return locator.fetch().parent.parent


def measure(packages: list[Path]) -> dict[str, dict[str, int]]:
    """Executed function-body lines after imports: {"real"|"standin": {file: lines}}."""
    import coverage

    from opsdk.cli import main

    real_root = _import_stack()
    roots = [f"{real_root}/*", *(f"{r}/*" if r.is_dir() else str(r) for r in STANDINS)]
    cov = coverage.Coverage(data_file=None, include=roots)
    cov.start()
    try:
        for package in packages:
            with contextlib.redirect_stdout(io.StringIO()):
                main(["check", str(package), "--backend", "ge,npugraph_ex", "--no-cache"])
    finally:
        cov.stop()
    data = cov.get_data()
    counts: dict[str, dict[str, int]] = {"real": {}, "standin": {}}
    for path in data.measured_files():
        executed = set(data.lines(path) or ()) & function_lines(path)
        if not executed:
            continue
        if _is_standin(path):
            counts["standin"][str(Path(path).relative_to(REPO))] = len(executed)
        else:
            counts["real"][str(Path(path).relative_to(real_root))] = len(executed)
    return counts


def by_part(standin: dict[str, int]) -> dict[tuple[str, bool], int]:
    """Stand-in lines summed by :data:`PARTS`."""
    parts: dict[tuple[str, bool], int] = {}
    for path, lines in standin.items():
        inside = str(Path(path).relative_to(OPSDK.relative_to(REPO)))
        part = next(part for prefix, part in PARTS.items() if inside.startswith(prefix))
        parts[part] = parts.get(part, 0) + lines
    return parts


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", type=Path, default=list(DEFAULT_PACKAGES))
    parser.add_argument("--top", type=int, default=15, help="files listed per side")
    args = parser.parse_args(argv)
    counts = measure(args.packages)
    real, standin = (sum(counts[side].values()) for side in ("real", "standin"))
    share = 100.0 * real / (real + standin)
    for side in ("real", "standin"):
        print(f"{side}: {sum(counts[side].values())} lines in {len(counts[side])} files")
        ranked = sorted(counts[side].items(), key=lambda kv: -kv[1])
        for path, lines in ranked[: args.top]:
            print(f"  {lines:6d}  {path}")
    print("stand-in lines by what they stand in for:")
    parts = by_part(counts["standin"])
    for (part, _), lines in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {lines:6d}  {part}")
    print(f"real share of executed non-import lines: {share:.1f}% ({real} / {real + standin})")
    # The principle the figure checks: only native layers stood in, all Python real.
    python = real + sum(lines for (_, native), lines in parts.items() if not native)
    print(
        f"real share of the Python layers (native stand-ins left out): "
        f"{100.0 * real / python:.1f}% ({real} / {python})"
    )
    return share


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
