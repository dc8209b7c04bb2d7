"""Torch references for a sample of production 910B vector ops of hicann's ops-nn and
ops-math (issue 38: ">= 90 % of the ones that run agree with a reference you write for a
sample of 20"), and the user's path that holds each op's own tiling and kernel to it:
``opsdk new --from-cann`` of the ops' folders (one package), each op's reference written
into its ``kernels.py`` and its cases into its ``specs.py`` (what a user writes), then
``opsdk check --backend ascendc``. Shared by ``bench/kernel_sample.py`` (all of them)
and ``tests/e2e/test_ascendc_real.py`` (the no-false-finding subset).

Each reference is the body of the package's ``<op>_reference`` function, in the
schema's argument names, written from the op's README formula; a case keeps to what the
op computes where its README does not say (Pows' exponents, AddLayerNorm's
``additional_output``: bench/README.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIRRORS = Path("/work/.mirror")
SHARED = {"ops-nn": ("common", "norm/norm_common"), "ops-math": ("common",)}


@dataclass(frozen=True)
class Reference:
    """One op: where it is, the reference body, the cases (``Support(...)`` texts) and
    the tolerances (a ``declare_supported`` ``tolerances=`` text, empty: opsdk's)."""

    op_type: str
    repo: str
    folder: str
    body: str
    cases: tuple[str, ...]
    tolerances: str = ""
    shared: tuple[str, ...] = ()  # other folders its sources include (foreach ops: foreach_utils)

    @property
    def name(self) -> str:
        return Path(self.folder).name


_RMS = "rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + epsilon)"
_HALVES = "a, b = x.float().chunk(2, dim)"
_NORM = (
    "Support(F32(7, 33), F32(33))",
    "Support(F16(100, 130), F16(130))",
    "Support(F32(3, 4000), F32(4000))",
)
_GLU = ("Support(F32(6, 64))", "Support(F16(5, 200))", "Support(F32(3, 2, 1000))")
_GROUP_NORM = (
    "n = x.shape[0]\n"
    "g = x.float().reshape(n, num_groups, -1)\n"
    "mean = g.mean(-1)\n"
    "var = g.var(-1, unbiased=False)\n"
    "y = ((g - mean[..., None]) * torch.rsqrt(var[..., None] + eps)).reshape(x.shape)\n"
    "shape = [1, -1] + [1] * (x.dim() - 2)\n"
    "y = y * gamma.float().reshape(shape) + beta.float().reshape(shape)\n"
    "if activate_swish:\n"
    "    y = y * torch.sigmoid(swish_scale * y)\n"
    "return y.to(x.dtype), mean.to(x.dtype), torch.rsqrt(var + eps).to(x.dtype)"
)
_HALF = "{torch.float16: (2e-3, 2e-3), torch.bfloat16: (1e-2, 1e-2)}"

REFERENCES = (
    Reference(
        "RmsNorm",
        "ops-nn",
        "norm/rms_norm",
        f"{_RMS}\nreturn (x.float() * rstd * gamma.float()).to(x.dtype), rstd",
        _NORM,
        _HALF,
    ),
    Reference(
        "GemmaRmsNorm",
        "ops-nn",
        "norm/gemma_rms_norm",
        f"{_RMS}\nreturn (x.float() * rstd * (1 + gamma.float())).to(x.dtype), rstd",
        _NORM,
        _HALF,
    ),
    Reference(
        "AddRmsNorm",
        "ops-nn",
        "norm/add_rms_norm",
        f"x = x1 + x2\n{_RMS}\nreturn (x.float() * rstd * gamma.float()).to(x.dtype), rstd, x",
        (
            "Support(F32(7, 33), F32(7, 33), F32(33))",
            "Support(F16(100, 130), F16(100, 130), F16(130))",
            "Support(F32(3, 4000), F32(3, 4000), F32(4000))",
        ),
        _HALF,
    ),
    Reference(
        "AddRmsNormCast",
        "ops-nn",
        "norm/add_rms_norm_cast",
        "x = x1 + x2\n"
        f"{_RMS}\nnormed = x.float() * rstd\n"
        # y1 is y2 widened (its README); float16 rounds before gamma, as its kernel does
        "if x.dtype == torch.float16:\n"
        "    y2 = normed.to(x.dtype) * gamma\n"
        "else:\n"
        "    y2 = (normed * gamma.float()).to(x.dtype)\n"
        "return y2.float(), y2, rstd, x",
        (
            "Support(F16(7, 33), F16(7, 33), F16(33))",
            "Support(F16(100, 130), F16(100, 130), F16(130))",
            "Support(BF16(3, 4000), BF16(3, 4000), BF16(4000))",
        ),
        _HALF,
        shared=("norm/rms_norm",),  # its kernel includes ../rms_norm/rms_norm_base.h
    ),
    Reference(
        "DeepNorm",
        "ops-nn",
        "norm/deep_norm",
        "z = x.float() * alpha + gx.float()\n"
        "mean = z.mean(-1, keepdim=True)\n"
        "rstd = torch.rsqrt((z - mean).pow(2).mean(-1, keepdim=True) + epsilon)\n"
        "y = (z - mean) * rstd * gamma.float() + beta.float()\n"
        "return mean, rstd, y.to(x.dtype)",
        (
            "Support(F32(7, 33), F32(7, 33), F32(33), F32(33))",
            "Support(F16(100, 130), F16(100, 130), F16(130), F16(130))",
            "Support(F32(3, 4000), F32(3, 4000), F32(4000), F32(4000))",
        ),
        _HALF,
    ),
    Reference(
        "Glu",
        "ops-nn",
        "activation/glu",
        f"{_HALVES}\nreturn (a * torch.sigmoid(b)).to(x.dtype)",
        _GLU,
        _HALF,
    ),
    Reference(
        "SwiGlu",
        "ops-nn",
        "activation/swi_glu",
        f"{_HALVES}\nreturn (torch.nn.functional.silu(a) * b).to(x.dtype)",
        _GLU,
        _HALF,
    ),
    Reference(
        "SwiGluGrad",
        "ops-nn",
        "activation/swi_glu_grad",
        "a, b = x.float().chunk(2, dim)\n"
        "s = torch.sigmoid(a)\n"
        "g = y_grad.float()\n"
        "da = g * b * s * (1 + a * (1 - s))\n"
        "return torch.cat([da, g * a * s], dim).to(x.dtype)",
        (
            "Support(F32(6, 32), F32(6, 64))",
            "Support(F16(5, 100), F16(5, 200))",
            "Support(F32(3, 2, 500), F32(3, 2, 1000))",
        ),
        _HALF,
    ),
    Reference(
        "GeGluV2",
        "ops-nn",
        "activation/ge_glu_v2",
        f"{_HALVES}\n"
        "act, other = (a, b) if activate_left else (b, a)\n"
        'gelu = torch.nn.functional.gelu(act, approximate="tanh" if approximate else "none")\n'
        "return (gelu * other).to(x.dtype), gelu.to(x.dtype)",
        _GLU,
        _HALF,
    ),
    Reference(
        "SituGlu",
        "ops-nn",
        "activation/situ_glu",
        f"{_HALVES}\n"
        "gate, up = (a, b) if activate_left else (b, a)\n"
        "situ = beta * torch.tanh(gate / beta) * torch.sigmoid(gate)\n"
        "if linear_beta > 0:\n"
        "    up = linear_beta * torch.tanh(up / linear_beta)\n"
        "return (situ * up).to(x.dtype)",
        _GLU,
        _HALF,
    ),
    Reference(
        "GroupNormSwish",
        "ops-nn",
        "norm/group_norm_swish",
        _GROUP_NORM,
        (
            "Support(F32(2, 8, 4, 4), F32(8), F32(8), Fixed(4))",
            "Support(F16(3, 32, 16), F16(32), F16(32), Fixed(8))",
        ),
        _HALF,
    ),
    Reference(
        "IsFinite",
        "ops-math",
        "math/is_finite",
        "return torch.isfinite(x)",
        ("Support(F32(1000))", "Support(F16(7, 33))", "Support(F32(4096, 3))"),
    ),
    Reference(
        "IsInf",
        "ops-math",
        "math/is_inf",
        "return torch.isinf(x)",
        ("Support(F32(1000))", "Support(F16(7, 33))", "Support(F32(4096, 3))"),
    ),
    Reference(
        "Pows",
        "ops-math",
        "math/pows",
        "return torch.pow(x1.float(), x2.float()).to(x1.dtype)",
        (  # the exponents its kernel computes: -2, -1, -0.5, 0.5, 2, 3; 2 here
            "Support(F32(1000, value_range=(0.5, 2.0)), F32(1, value_range=(2.0, 2.0000001)))",
            "Support(F16(7, 33, value_range=(0.5, 2.0)), F16(1, value_range=(2.0, 2.001)))",
        ),
        _HALF,
    ),
    Reference(
        "Segsum",
        "ops-math",
        "math/segsum",
        "t = x.shape[-1]\n"
        "keep = torch.ones(t, t, dtype=torch.bool).tril(-1)\n"
        "s = (x.float()[..., None] * keep).cumsum(-2)\n"
        'full = torch.where(torch.ones(t, t, dtype=torch.bool).tril(), s, float("-inf"))\n'
        "return torch.exp(full).to(x.dtype)",
        ("Support(F32(2, 3, 16))", "Support(F32(1, 2, 4, 40))", "Support(F16(2, 2, 8))"),
        # exp of a running sum: the sum's float32 rounding (its order the kernel's) grows
        # by exp's slope, 2e-6 relative at sums near 11
        "{torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1e-2, 1e-2)}",
    ),
    Reference(
        "TransformBiasRescaleQkv",
        "ops-math",
        "math/transform_bias_rescale_qkv",
        "return torch._transform_bias_rescale_qkv(qkv, qkv_bias, num_heads)",
        (
            "Support(F32(2, 8, 96), F32(96), Fixed(4))",
            "Support(F16(3, 5, 192), F16(192), Fixed(2))",
        ),
        _HALF,
    ),
    Reference(
        "AmpUpdateScale",
        "ops-math",
        "math/amp_update_scale",
        "if found_inf.item() != 0:\n"
        "    return current_scale * backoff_factor, torch.zeros_like(growth_tracker)\n"
        "grown = growth_tracker + 1\n"
        "if grown.item() == growth_interval:\n"
        "    return current_scale * growth_factor, torch.zeros_like(growth_tracker)\n"
        "return current_scale.clone(), grown",
        ("Support(F32(1), I32(1), F32(1), Fixed(2.0), Fixed(0.5), Fixed(3))",),
    ),
    Reference(
        "HistogramV2",
        "ops-math",
        "math/histogram_v2",
        # as the kernel counts (into int32, its definition's y): min == max widened by one
        # each way, min > max counts none
        "lo, hi = min.item(), max.item()\n"
        "lo, hi = (lo - 1, hi + 1) if lo == hi else (lo, hi)\n"
        "if lo > hi:\n"
        "    return torch.zeros(bins, dtype=torch.int32)\n"
        "return torch.histc(x.float(), bins, lo, hi).to(torch.int32)",
        ("Support(F32(1000), F32(), F32(), Fixed(10))",),
    ),
    Reference(
        "AddLayerNorm",
        "ops-nn",
        "norm/add_layer_norm",
        "z = x1.float() + x2.float() + (0 if bias is None else bias.float())\n"
        "x = z.to(x1.dtype)\n"
        "mean = z.mean(-1, keepdim=True)\n"
        "rstd = torch.rsqrt((z - mean).pow(2).mean(-1, keepdim=True) + epsilon)\n"
        "y = (z - mean) * rstd * gamma.float() + beta.float()\n"
        "return y.to(x.dtype), mean, rstd, x",
        (
            # x is written only with additional_output (the output is there either way)
            "Support(F32(7, 33), F32(7, 33), F32(33), F32(33), None, additional_output=True)",
            "Support(F16(100, 130), F16(100, 130), F16(130), F16(130), None, "
            "additional_output=True)",
            "Support(F32(3, 4000), F32(3, 4000), F32(4000), F32(4000), F32(4000), "
            "additional_output=True)",
        ),
        _HALF,
    ),
    Reference(
        "GroupNormSilu",
        "ops-nn",
        "norm/group_norm_silu",
        _GROUP_NORM.replace("swish_scale * y", "y").replace("activate_swish", "activate_silu"),
        (
            "Support(F32(2, 8, 4, 4), F32(8), F32(8), Fixed(4))",
            "Support(F16(3, 32, 16), F16(32), F16(32), Fixed(8))",
        ),
        _HALF,
    ),
)
BY_NAME = {r.op_type: r for r in REFERENCES}


def extract(references, into: Path) -> Path:
    """The ops' folders and their repositories' shared headers, from the bare mirrors,
    into one tree (``into``: the repositories' layouts merged; :func:`available` first)."""
    for repo in sorted({r.repo for r in references}):
        git = MIRRORS / f"hicann+{repo}" / "repo"
        folders = [f for r in references if r.repo == repo for f in (r.folder, *r.shared)]
        archive = subprocess.run(
            ["git", f"--git-dir={git}", "archive", "HEAD", "--", *SHARED[repo], *folders],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def available(references) -> bool:
    """Whether the mirrors of every repository of ``references`` are on this machine."""
    return all((MIRRORS / f"hicann+{r.repo}" / "repo").is_dir() for r in references)


def scaffold(references, work: Path, namespace: str = "sample") -> Path:
    """One package made ``--from-cann`` from the ops' folders, each op's reference and
    cases written in: what a user does after ``opsdk new``. Returns the package."""
    source = work / namespace
    source.mkdir(parents=True, exist_ok=True)
    extract(references, source)
    out = work / "pkg"
    done = subprocess.run(
        [sys.executable, "-m", "opsdk", "new", "--from-cann", str(source), "--namespace",
         namespace, "--skip-unreadable", "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"opsdk new --from-cann failed: {done.stderr[-2000:]}")
    package = out / source.name
    for reference in references:
        write(reference, folder_of(package, reference.name))
    return package


def folder_of(package: Path, name: str) -> Path:
    """The op's module folder in the package (the first op's is the package's own)."""
    top = package / package.name
    return top / name if (top / name / "kernels.py").is_file() else top


def write(reference: Reference, folder: Path) -> None:
    """The reference into ``kernels.py``, the cases into ``specs.py``."""
    kernels = folder / "kernels.py"
    body = "\n".join(f"    {line}" if line else "" for line in reference.body.splitlines())
    text, count = re.subn(
        r"    raise ImplementMe\((?:[^()]|\([^()]*\))*\)", lambda _: body, kernels.read_text()
    )
    if count != 1:
        raise RuntimeError(f"{kernels}: no ImplementMe to replace")
    kernels.write_text(text.replace("ImplementMe, ", "").replace(", ImplementMe", ""))
    write_cases(folder, reference.cases, reference.tolerances)


def write_cases(folder: Path, cases, tolerances: str = "") -> None:
    """``cases`` (``Support(...)`` texts) as the op's whole list in ``specs.py``, and its
    tolerances (a ``tolerances=`` text) where given."""
    specs = folder / "specs.py"
    text = re.sub(r"from opsdk\.inputs import [^\n]+", _IMPORTS, specs.read_text())
    listed = "".join(f"        {case},\n" for case in cases)
    text, count = re.subn(r"(declare_supported\(\n    OP,\n    \[\n).*?(    \],?\n)",
                          lambda m: m[1] + listed + m[2], text, flags=re.S)  # fmt: skip
    if count != 1:
        raise RuntimeError(f"{specs}: no declare_supported list to replace")
    if tolerances and "\n    tolerances=" not in text:
        text = text.replace("    # tolerances=", f"    tolerances={tolerances},\n    # tolerances=")
        text = text.replace(_IMPORTS, f"import torch\n{_IMPORTS}")
    specs.write_text(text)


_IMPORTS = "from opsdk.inputs import BF16, F16, F32, I32, Fixed, Support, declare_supported"
