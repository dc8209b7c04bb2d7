"""Scaffolded op packages for tests: each request is built once per session, then copied.

`opsdk new` renders and formats a package (about 0.3 s of CPU); the e2e tests need
dozens of packages but only a handful of distinct ones, so the `scaffolds` fixture
(tests/conftest.py) builds each (name, options) once per test process and hands out
copies for a test to edit, or the built package itself for a test that only reads it.
"""

import re
import shutil
import subprocess
from pathlib import Path

from opsdk.scaffold import NewRequest, into, new


class Scaffolds:
    """Packages by `opsdk new` request, built under ``root`` on first use."""

    def __init__(self, root: Path):
        self._root = root
        self._built: dict[tuple, Path] = {}

    def shared(self, name: str, **options) -> Path:
        """The package `opsdk new NAME` writes with ``options``, shared: never change it."""
        key = (name, *sorted(options.items()))
        if key not in self._built:
            out = self._root / str(len(self._built))
            self._built[key] = new(NewRequest(name, out=out, **options)).path
        return self._built[key]

    def copy(self, out: Path, name: str, **options) -> Path:
        """A copy of that package at ``out/NAME``, where `opsdk new --out OUT` writes it."""
        source = self.shared(name, **options)
        ignore = shutil.ignore_patterns("__pycache__")
        return Path(shutil.copytree(source, Path(out) / name, ignore=ignore))


def edit(path, old, new_text):
    """Replace ``old`` in the file at ``path``; it must be there."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new_text))


def implemented(scaffolds, out, name, schema, kernel, fake="meta.same_as(x)", **options):
    """A copy of a scaffolded skeleton at ``out/NAME`` with its kernels and fake filled in
    (``options``: more of `opsdk new`'s, e.g. ``updatable=("lens",)``)."""
    pkg = scaffolds.copy(out, name, namespace=f"g_{name}", schema=schema, **options)
    _fill(pkg / name, kernel, fake)
    return pkg


def added(pkg, name, schema, kernel, fake="meta.same_as(x)"):
    """The op ``name`` added to the op package ``pkg`` (`opsdk new --into`), its kernels
    and fake filled in; returns the op's directory."""
    into.add(NewRequest(name, schema=schema), pkg)
    op_dir = next(pkg.glob(f"*/{name}"))
    _fill(op_dir, kernel, fake)
    return op_dir


def _fill(op_dir, kernel, fake):
    """The skeleton in ``op_dir`` with ``kernel`` as both kernels' body and ``fake`` returned
    (``fake=None`` keeps the scaffold's own, as for an op that returns nothing)."""
    kernels = op_dir / "kernels.py"
    text, count = re.subn(r"raise ImplementMe\(\s*__file__,[^)]*\)", kernel, kernels.read_text())
    assert count == 2, "expected a skeleton with an npu and a reference kernel"
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    if fake is None:
        return
    fake_py = op_dir / "fake.py"
    text, count = re.subn(
        r"raise ImplementMe\(\s*__file__,[^)]*\)", f"return {fake}", fake_py.read_text()
    )
    assert count == 1
    fake_py.write_text(text.replace("from opsdk import ImplementMe", "from opsdk import meta"))


def compile_cann_branch(source: Path, cann: bool = True) -> subprocess.CompletedProcess:
    """Compile a generated op library ``-fsyntax-only`` with its NPU-host branch on: against
    the headers the torch-npu wheel ships (op-plugin's EXEC_NPU_CMD, ACL), with the build's
    defines and include paths (cpp_build's CANN recipe), warnings as errors. ``cann=False``:
    the offline branch instead, as the build compiles it without CANN."""
    import sysconfig

    from torch.utils import cpp_extension

    from opsdk._runtime import cpp_build, locator

    system = [*cpp_extension.include_paths(), sysconfig.get_paths()["include"]]  # Python.h too
    defines = []
    if cann:
        root = locator.torch_npu_file("include/graph/operator_reg.h").parents[2]
        system += cpp_build.cann_include_paths(root)
        defines = cpp_build.cann_defines()
    includes = [f"-I{cpp_build.INCLUDE}", *(f"-isystem{p}" for p in system)]
    return subprocess.run(
        ["c++", "-std=c++20", "-fsyntax-only", "-Wall", "-Werror", *defines]
        + [*includes, str(source)],
        capture_output=True,
        text=True,
    )
