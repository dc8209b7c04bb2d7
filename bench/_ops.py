"""Generated op packages for the benchmarks, made with `opsdk new` like a user's."""

from __future__ import annotations

import re
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


# add + RMSNorm, as a model writes it: the fused op's reference and its pattern's search.
_NORMED = "(xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)"
_ADD_RMS_NORM = """x = x1 + x2
    xf = x.float()
    y = {scaled}
    return {ret}"""
# How it scales by gamma: the same ops in either order, two patterns neither matches
# the other's graph (the matcher takes a call's arguments in order).
SCALED = {"after": f"{_NORMED} * gamma", "before": f"gamma * {_NORMED}"}
_ADD_RMS_NORM_SPECS = '''"""Cases of the op: float32 and float16, eps varied by the harness."""

import torch

from opsdk import F16, F32, Support, declare_supported

from .schema import OP

declare_supported(
    OP,
    [Support(F32(4, 8), F32(4, 8), F32(8)), Support(F16(4, 8), F16(4, 8), F16(8))],
    tolerances={torch.float16: (1e-2, 1e-2)},
)
'''
_EMPTY_PAIR = (
    "return torch.empty_like(x1, memory_format=torch.contiguous_format), "
    "torch.empty_like(x1, memory_format=torch.contiguous_format)"
)
ADD_RMS_NORM_SCHEMA = (
    "{name}(Tensor x1, Tensor x2, Tensor gamma, float eps=1e-6) -> (Tensor, Tensor)"
)


def fill_add_rms_norm(pkg: Path, name: str, gamma: str = "after") -> Path:
    """The package `opsdk new NAME --pattern --schema ADD_RMS_NORM_SCHEMA` wrote at ``pkg``,
    its skeletons written as a user writes them: kernels, fake, the pattern's search
    function (scaling by gamma ``before`` or ``after``: :data:`SCALED`) and float32 and
    float16 cases. Returns ``pkg``."""
    mod = pkg / name
    skeleton = r"raise ImplementMe\(\s*__file__,[^)]*\)"
    text = (mod / "kernels.py").read_text().replace("from opsdk import ImplementMe\n", "")
    for which, ret in (("_npu", "y.contiguous(), x.contiguous()"), ("_reference", "y, x")):
        pattern = rf'raise ImplementMe\(\s*__file__,\s*"\w+{which}",[^)]*\)'
        text = re.sub(pattern, _ADD_RMS_NORM.format(ret=ret, scaled=SCALED[gamma]), text)
    (mod / "kernels.py").write_text(text)
    fake = re.sub(skeleton, _EMPTY_PAIR, (mod / "fake.py").read_text())
    (mod / "fake.py").write_text(fake.replace("from opsdk import ImplementMe\n", ""))
    body = _ADD_RMS_NORM.format(ret="y, x", scaled=SCALED[gamma])
    search = re.sub(skeleton, body, (mod / "patterns.py").read_text())
    search = search.replace("from opsdk import ImplementMe\n", "")
    (mod / "patterns.py").write_text(search)
    (mod / "specs.py").write_text(_ADD_RMS_NORM_SPECS)
    init = (mod / "__init__.py").read_text()
    (mod / "__init__.py").write_text(
        init.replace("from . import fake, ir", "from . import fake, ir, specs")
    )
    return pkg


def generate_add_rms_norm(root: Path, name: str, namespace: str, gamma: str = "after") -> Path:
    """An add + RMSNorm op package with its fusion pattern, at ``root/name`` (``gamma``:
    :func:`fill_add_rms_norm`)."""
    req = NewRequest(
        name,
        namespace=namespace,
        schema=ADD_RMS_NORM_SCHEMA.format(name=name),
        out=root,
        pattern=True,
    )
    return fill_add_rms_norm(new(req).path, name, gamma)
