"""Real torch_npu ops pass every column and shape mode offline, from what the wheel ships.

Each op package (tests/real_ops.py) holds torch_npu's schema, its Meta function,
TorchAir's own converter module and CANN's REG_OP, all read from the torch-npu
wheel at test time; only the reference kernel is written by hand. One
`opsdk check` run per package.
"""

from __future__ import annotations

import dataclasses

import pytest
import real_ops

from opsdk.axes import SHAPE_MODES
from opsdk.harness import columns

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def packages(wheel, tmp_path_factory):
    """Each real op's package, written once per module."""
    root = tmp_path_factory.mktemp("real_ops")
    return {name: real_ops.write_package(op, root) for name, op in real_ops.REAL_OPS.items()}


BUFFER_DYNAMIC = ("skip", "buffer", "dynamic")


@pytest.mark.parametrize("name", sorted(real_ops.REAL_OPS))
def test_real_op_passes_every_cell(name, packages, opsdk_cli):
    run = opsdk_cli("check", packages[name], json_report=True)
    assert run.report is not None, run.stderr[-2000:]
    # an in-place op also runs in its default contexts, where Dynamo's static buffers
    # leave buffer-dynamic out (a skip)
    failed = [
        f"{r['op']} [{r['column']}-{r['shapes']}/{r['context']}] {r['layer']}: {r['message']}"
        for r in run.report["results"]
        if r["status"] != "pass" and (r["status"], r["context"], r["shapes"]) != BUFFER_DYNAMIC
    ]
    assert not failed, "\n".join(failed)
    ops = len(real_ops.REAL_OPS[name].names)
    alone = [r for r in run.report["results"] if r["context"] is None]
    every = [n for n in columns.names() if columns.column(n).selects is None]  # no pattern
    assert len(alone) == ops * len(every) * len(SHAPE_MODES)
    assert run.code == 0, run.stderr[-2000:]
    # TorchAir warns for each of torch_npu's ops missing offline: opsdk keeps that quiet.
    assert "Failed to import torchair" not in run.stderr


# --- Broken twins: each real op with one piece broken fails in the layer that names it -------


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def _drop_arg_names(pkg):
    """ir.py registers CANN's IR for the op without mapping torch's names onto it."""
    _edit(
        pkg / "ir.py",
        "IR = register(bind(PARSED, OPS[0], fixed_args={}))",
        "IR = register(IrDef(\n"
        "    PARSED.op_type, PARSED.inputs, PARSED.outputs, PARSED.attrs, torch_op=OPS[0].name()\n"
        "))",
    )


def _meta_keeps_the_split_dim(pkg):
    _edit(pkg / "fake.py", "math.floor(output_size[dim] / 2)", "output_size[dim]")


def _reference_ignores_approximate(pkg):
    """The npu kernel (on a host: torch_npu's) is right, the hand-written reference is not."""
    _edit(
        pkg / "schema.py", 'kernels.npu_gelu, "PrivateUse1"', 'kernels.npu_gelu_npu, "PrivateUse1"'
    )
    _edit(pkg / "kernels.py", "def npu_gelu(", "def npu_gelu_npu(")
    with (pkg / "kernels.py").open("a") as f:
        f.write("\n\ndef npu_gelu(self, *, approximate='none'):\n")
        f.write("    return torch.nn.functional.gelu(self)\n")


def _schema_default_eps(pkg):
    """eps left at the schema's 1e-5: the FX node omits it, TorchAir's converter says 1e-4."""
    _edit(pkg / "specs.py", "group=4, eps=1e-3", "group=4")


def _functional_writes_its_input(pkg):
    _edit(
        pkg / "kernels.py", "npu_scatter_nd_update_(self.clone(),", "npu_scatter_nd_update_(self,"
    )


# twin -> (real op, what breaks it, the op's cell that must fail: backend, layer, message)
BROKEN = {
    "ir-of-another-op": (
        # ir.py binds the REG_OP of the GE op the converter picks with a rotate matrix.
        dataclasses.replace(
            real_ops.REAL_OPS["npu_rotary_mul"],
            ge_op="RotaryPositionEmbedding",
            fixed_args={"rotary_mode": "half"},
        ),
        None,
        ("npu::npu_rotary_mul", "ge", "converter", "RotaryMul"),
    ),
    "ir-unmapped": (
        real_ops.REAL_OPS["npu_rms_norm"],
        _drop_arg_names,
        ("npu::npu_rms_norm", "ge", "converter", "IR input 'x' of RmsNorm is not an argument"),
    ),
    "meta-shape": (
        real_ops.REAL_OPS["npu_swiglu"],
        _meta_keeps_the_split_dim,
        ("npu::npu_swiglu", "opcheck", "fake", "test_faketensor"),
    ),
    "reference": (
        real_ops.REAL_OPS["npu_gelu"],
        _reference_ignores_approximate,
        ("npu::npu_gelu", "eager", "eager", "approximate='tanh'"),
    ),
    "converter-default": (
        real_ops.REAL_OPS["npu_group_norm_silu"],
        _schema_default_eps,
        ("npu::npu_group_norm_silu", "ge", "ge-exec", "values differ"),
    ),
    "undeclared-write": (
        real_ops.REAL_OPS["npu_scatter_nd_update"],
        _functional_writes_its_input,
        ("npu::npu_scatter_nd_update", "opcheck", "schema", "test_schema"),
    ),
}
# Twins of different ops run in one `opsdk check`: a package that imports them all.
_ALL_TWINS = """
import importlib, sys
from pathlib import Path

for project in Path(__file__).parents[2].iterdir():
    sys.path.insert(0, str(project))
OPS = tuple(op for name in {names!r} for op in importlib.import_module(name).OPS)
"""


@pytest.fixture(scope="module")
def broken_run(wheel, tmp_path_factory, opsdk_cli_module):
    root = tmp_path_factory.mktemp("real_op_twins")
    names = []
    for op, breaks, _ in BROKEN.values():
        project = real_ops.write_package(op, root)
        if breaks:
            breaks(project / op.package)
        names.append(op.package)
    aggregate = root / "twins" / "twins"
    aggregate.mkdir(parents=True)
    (aggregate / "__init__.py").write_text(_ALL_TWINS.format(names=names))
    backends = sorted({cell[1] for _, _, cell in BROKEN.values()})
    return opsdk_cli_module(
        "check", aggregate, "--backend", ",".join(backends), "--shapes", "static", json_report=True
    )


@pytest.mark.parametrize("twin", sorted(BROKEN))
def test_a_broken_real_op_fails_in_the_layer_that_names_the_fault(twin, broken_run):
    op, backend, layer, message = BROKEN[twin][2]
    assert broken_run.report is not None, broken_run.stderr[-2000:]
    [cell] = broken_run.cells(op=op, column=backend)
    assert (cell["status"], cell["layer"]) == ("fail", layer), cell["message"]
    assert message in cell["message"]
