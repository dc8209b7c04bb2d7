"""Real torch_npu ops as op packages, read from the torch-npu wheel at test time.

An Ascend developer who brings an existing op has its schema, its Meta function,
TorchAir's converter and CANN's ``REG_OP``; all four come from the wheel opsdk
already fetches for TorchAir (:func:`opsdk._runtime.locator.torch_npu_file`), never
from this repository. :func:`write_package` lays them out as the op package such a
developer would have: only the reference kernel (and, where TorchAir declares none
that fit, the specs) is written by hand, in :data:`REAL_OPS`.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from opsdk import cann
from opsdk.audit.torch_npu import (
    CONVERTER_MODULE,
    converter_specs,
    meta_source,
    prototype,
    schema,
)


@dataclass(frozen=True)
class RealOp:
    """A real torch_npu op brought into an op package: everything but ``reference``
    (and ``specs`` where TorchAir's own do not fit) comes from the wheel.

    ``names`` are the torch ops the package holds (an in-place op with its functional
    partner: the in-place one first, the IR stands for it); ``ge_op`` the GE op type its
    converter builds; ``reference`` the hand-written kernel, a function per op named
    like it; ``fixed_args`` the arguments the converter consumes in Python."""

    names: tuple[str, ...]
    ge_op: str
    converter: str
    reference: str
    specs: str | None = None
    fixed_args: dict = field(default_factory=dict)

    @property
    def package(self) -> str:
        return self.names[-1]


def write_package(op: RealOp, out: Path) -> Path:
    """The op package at ``out/PACKAGE`` (what ``opsdk check`` takes)."""
    pkg = Path(out) / op.package / op.package
    pkg.mkdir(parents=True)
    files = {
        "__init__.py": _INIT.format(package=op.package),
        "schema.py": _schema_py(op),
        "kernels.py": '"""The reference kernel: hand-written."""\n\nimport torch\n\n\n'
        + textwrap.dedent(op.reference).strip()
        + "\n",
        "fake.py": _fake_py(op),
        "ir.py": _ir_py(op),
        "converter.py": _CONVERTER.format(module=f"{CONVERTER_MODULE}.{op.converter}"),
        "specs.py": _specs_py(op),
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    return pkg.parent


_INIT = '''"""{package}, a real torch_npu op; offline its reference kernel serves the npu."""

from opsdk.converters import load_converters
from opsdk.device import ensure_npu

ensure_npu()

from .schema import OPS  # noqa: E402, F401
from . import fake, ir, specs  # noqa: E402, F401, I001  (after the schemas they attach to)

load_converters(f"{{__name__}}.converter")
'''

_CONVERTER = '''"""TorchAir's own converter, unchanged. TorchAir imports all its own converters
at once and skips (with a warning) those whose torch op did not exist yet: import it
again now that it does."""

import importlib

importlib.import_module("{module}")
'''


def _schema_py(op: RealOp) -> str:
    lines = [
        '"""The schemas: torch_npu\'s own, from its codegen yaml."""',
        "",
        "import torch",
        "",
        "from . import kernels",
        "",
        'LIB = torch.library.Library("npu", "FRAGMENT")',
    ]
    for name in op.names:
        tags = ", tags=torch.Tag.inplace" if name.endswith("_") else ""
        lines += [
            f"LIB.define({schema(name)!r}{tags})",
            f'LIB.impl("{name}", kernels.{name}, "PrivateUse1")',
            f'LIB.impl("{name}", kernels.{name}, "CPU")',
        ]
    ops = ", ".join(f"torch.ops.npu.{name}.default" for name in op.names)
    lines += ["", f"OPS = ({ops},)", ""]
    return "\n".join(lines)


# What the Meta functions import from torch_npu, which cannot be imported offline.
_META_PRELUDE = '''"""torch_npu's own Meta functions, from op_plugin/meta/_meta_registrations.py."""

import math  # noqa: F401

import torch
from torch.library import Library, impl


class ErrCode:  # torch_npu.utils._error_code's, stood in
    NOT_SUPPORT = VALUE = PARAM = TYPE = "ERR"


def ops_error(code):
    return f" [{code}]"

'''


def _fake_py(op: RealOp) -> str:
    return f"{_META_PRELUDE}\n\n{meta_source(op.names)}\n"


def _ir_py(op: RealOp) -> str:
    text = prototype(op.ge_op)
    return (
        '"""The GE IR: CANN\'s REG_OP, bound to the torch op (CANN\'s names mapped)."""\n\n'
        "from opsdk.irdef import Attr, Input, IrDef, Output, bind, register  # noqa: F401\n\n"
        "from .schema import OPS\n\n"
        f'REG_OP = """\n{text}\n"""\n'
        f"PARSED = {cann.read(text)[0].ir!r}\n"
        f"IR = register(bind(PARSED, OPS[0], fixed_args={op.fixed_args!r}))\n"
    )


def _specs_py(op: RealOp) -> str:
    cases = op.specs or converter_specs(op.converter)
    assert cases, f"TorchAir declares no specs for {op.package}: write them"
    origin = "hand-written" if op.specs else "TorchAir's own, from its converter file"
    return (
        f'"""Input specs: {origin}."""\n\n'
        "from opsdk.inputs import BF16, BOOL, F16, F32, I8, I32, I64, Support  # noqa: F401\n"
        "from opsdk.inputs import declare_supported\n\n"
        "from .schema import OPS\n\n"
        f"for op in OPS:\n    declare_supported(op, {textwrap.dedent(cases).strip()})\n"
    )


REAL_OPS = {
    "npu_rms_norm": RealOp(
        ("npu_rms_norm",),
        "RmsNorm",
        "npu_rms_norm",
        """
        def npu_rms_norm(self, gamma, epsilon=1e-6):
            x = self.float()
            dims = tuple(range(self.dim() - gamma.dim(), self.dim()))
            rstd = torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + epsilon)
            return (x * rstd * gamma.float()).to(self.dtype), rstd
        """,
    ),
    "npu_swiglu": RealOp(
        ("npu_swiglu",),
        "SwiGlu",
        "npu_swiglu",
        """
        def npu_swiglu(self, dim=-1):
            half = self.size(dim) // 2
            a, b = self.float().narrow(dim, 0, half), self.float().narrow(dim, half, half)
            return (torch.nn.functional.silu(a) * b).to(self.dtype).contiguous()
        """,
        # TorchAir's cases are (2, 2): the halves are of size 1, which torch specializes,
        # so a dynamic graph recompiles when it grows.
        """[
            Support(F32(2, 4)),
            Support(F16(2, 4)),
            Support(F32(4, 3), dim=0),
        ]""",
    ),
    "npu_gelu": RealOp(
        ("npu_gelu",),
        "GeluV2",
        "npu_gelu",
        """
        def npu_gelu(self, *, approximate="none"):
            return torch.nn.functional.gelu(self, approximate=approximate)
        """,
    ),
    "npu_group_norm_silu": RealOp(
        ("npu_group_norm_silu",),
        "GroupNormSilu",
        "npu_group_norm_silu",
        """
        def npu_group_norm_silu(input, weight, bias, group, eps=1e-5):
            n, c = input.shape[:2]
            y, mean, rstd = torch.native_group_norm(
                input.contiguous(), weight, bias, n, c, input[0, 0].numel(), group, eps
            )
            # Laid out like the input, as the Meta function's empty_like says.
            return torch.empty_like(input).copy_(torch.nn.functional.silu(y)), mean, rstd
        """,
        # TorchAir's case (1, 32, 128, 64), smaller, with the channels (a multiple of the
        # groups) kept in dynamic mode; and one without the optional weight and bias.
        # Neither uses the schema's eps (1e-5): the FX node then leaves it out and
        # TorchAir's converter fills in its own default, 1e-4 (a real mismatch, see the
        # tests).
        """[
            Support(
                F16(1, 32, 16, 8, static_dims=(1,)),
                F16(32, static_dims=(0,)),
                F16(32, static_dims=(0,)),
                group=32,
                eps=0.0001,
            ),
            Support(F32(2, 8, 4, 4, static_dims=(1,)), None, None, group=4, eps=1e-3),
        ]""",
    ),
    "npu_rotary_mul": RealOp(
        ("npu_rotary_mul",),
        "RotaryMul",
        "npu_rotary_mul",
        """
        def npu_rotary_mul(self, r1, r2, rotary_mode="half", rotate=None):
            x1, x2 = self.chunk(2, -1)
            return (self * r1 + torch.cat((-x2, x1), -1) * r2).contiguous()
        """,
        # TorchAir's cases are (2, 8192, 5, 128): smaller here, the head size kept.
        """[
            Support(F32(2, 8, 5, 128, static_dims=(3,)), F32(1, 8, 1, 128, static_dims=(3,)),
                    F32(1, 8, 1, 128, static_dims=(3,))),
            Support(F16(2, 8, 5, 128, static_dims=(3,)), F16(1, 8, 1, 128, static_dims=(3,)),
                    F16(1, 8, 1, 128, static_dims=(3,))),
        ]""",
        # Its converter picks RotaryMul for the half mode without a rotate matrix.
        fixed_args={"rotary_mode": "half", "rotate": None},
    ),
    "npu_scatter_nd_update": RealOp(
        ("npu_scatter_nd_update_", "npu_scatter_nd_update"),
        "ScatterNdUpdate",
        "npu_scatter_nd_update",
        """
        def npu_scatter_nd_update_(self, indices, updates):
            return self.index_put_(tuple(indices.long().unbind(-1)), updates)


        def npu_scatter_nd_update(self, indices, updates):
            return npu_scatter_nd_update_(self.clone(), indices, updates)
        """,
        # TorchAir declares none: rows of a (4, 3) tensor, by (K, 1) indices.
        """[
            Support(F32(4, 3), I64(2, 1, value_range=(0, 4), static_dims=(1,)), F32(2, 3)),
            Support(F16(4, 3), I32(3, 1, value_range=(0, 4), static_dims=(1,)), F16(3, 3)),
        ]""",
    ),
}
