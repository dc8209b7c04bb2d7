"""torch_npu's in-place convention and pairs (`opsdk new --pair`), and attaching to an op
defined elsewhere (`opsdk new --attach NS::OP`), through every column."""

import re
import subprocess
import sys
import textwrap

import pytest
from scaffolded import edit

NAMESPACE = "pair_t"
ATTACHED = "npu::npu_opsdk_scale"
ATTACH_SCHEMA = "npu_opsdk_scale(Tensor self, float scale=1.0) -> Tensor"
SHAPES = "static,dynamic"


def _implement(pkg, name, kernel, fake):
    """Fill in an attached skeleton's reference and fake function."""
    edit(
        pkg / name / "kernels.py",
        f'raise ImplementMe(__file__, "{name}_reference", "compute the op on CPU tensors")',
        kernel,
    )
    edit(pkg / name / "kernels.py", "from opsdk import ImplementMe\n", "")
    fake_py = pkg / name / "fake.py"
    edit(
        fake_py,
        f'raise ImplementMe(__file__, "{name}_fake", "return empty tensors of the output shapes")',
        fake,
    )
    edit(fake_py, "from opsdk import ImplementMe, attach", "from opsdk import attach")


@pytest.fixture
def pair_package(scaffolds, tmp_path):
    """`my_upd --pair` (the working add pair), plus a lone torch_npu-style in-place op added
    with --into, its reference filled in."""
    pkg = scaffolds.copy(tmp_path, "my_upd", namespace=NAMESPACE, pair=True)
    schema = "my_axpy_(Tensor(a!) self, Tensor other, float alpha=1.0) -> Tensor(a!)"
    done = subprocess.run(
        [sys.executable, "-m", "opsdk", "new", "my_axpy_", "--schema", schema, "--into", pkg],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    kernels = pkg / "my_upd" / "my_axpy_" / "kernels.py"
    text, count = re.subn(
        r"raise ImplementMe\(.*?\)$",
        "return self.add_(other, alpha=alpha)",
        kernels.read_text(),
        flags=re.S | re.M,
    )
    assert count == 2, text
    kernels.write_text(text)
    edit(kernels, "from opsdk import ImplementMe\n", "")
    return pkg


def test_pairs_and_torch_npu_inplace_ops_pass_every_column(pair_package, opsdk_cli):
    run = opsdk_cli("check", pair_package, "--shapes", SHAPES, json_report=True)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-2000:]
    ops = {cell["op"] for cell in run.report["results"]}
    assert ops == {f"{NAMESPACE}::my_upd_", f"{NAMESPACE}::my_upd", f"{NAMESPACE}::my_axpy_"}
    # the in-place ops also run in view and buffer; Dynamo holds buffers static (a skip)
    outcomes = {(c["status"], c["context"], c["shapes"]) for c in run.report["results"]}
    assert {o for o in outcomes if o[0] != "pass"} == {("skip", "buffer", "dynamic")}


def test_npugraph_ex_reinplaces_the_functional_op_into_its_partner(scaffolds, tmp_path):
    """npugraph_ex's input_inplace_pass finds my_upd_ for my_upd by torch's naming rule
    (``_maybe_get_inplace_op``): the generated pair really is one to it."""
    pkg = scaffolds.shared("my_upd", namespace="pair_spy", pair=True)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(pkg)!r})
        import torch, my_upd
        from opsdk.offline import torchair as bringup
        bringup.import_torchair_stack()
        from npugraph_ex._acl_concrete_graph import graph_pass
        seen = []
        original = graph_pass._reinplace_input_mutated_ops
        def spy(gm):
            gm = original(gm)
            seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
            return gm
        graph_pass._reinplace_input_mutated_ops = spy
        fn = torch.compile(
            lambda x, y: x.copy_(torch.ops.pair_spy.my_upd(x, y)), backend=bringup.get_backend()
        )
        x, y = torch.ones(2, 3, device="npu"), torch.ones(2, 3, device="npu")
        fn(x, y)
        assert torch.equal(x.cpu(), torch.full((2, 3), 2.0)), x
        print(seen)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = done.stdout.strip().splitlines()[-1]
    assert "pair_spy.my_upd_.default" in seen and "pair_spy.my_upd.default" not in seen, seen


@pytest.fixture
def attached(scaffolds, tmp_path):
    pkg = scaffolds.copy(
        tmp_path, "npu_opsdk_scale", namespace="npu", schema=ATTACH_SCHEMA, attach=True
    )
    # Contiguous, as the op's real npu kernel (an aclnn kernel) returns it.
    fake = "return torch.empty_like(self, memory_format=torch.contiguous_format)"
    _implement(pkg, "npu_opsdk_scale", "return self * scale", fake)
    return pkg


# The op "elsewhere": its own library defines it, with its own npu and Meta kernels and
# its own converter, each counting its calls.
ELSEWHERE = """
import torch
from opsdk.converters import load_converters
from opsdk.device import ensure_npu

ensure_npu()
CALLS = {"npu": 0, "meta": 0, "converter": 0}
LIB = torch.library.Library("npu", "FRAGMENT")
LIB.define("npu_opsdk_scale(Tensor self, float scale=1.0) -> Tensor")


def _npu(self, scale=1.0):
    CALLS["npu"] += 1
    return (self * scale).contiguous()


def _meta(self, scale=1.0):
    CALLS["meta"] += 1
    return torch.empty_like(self, memory_format=torch.contiguous_format)


LIB.impl("npu_opsdk_scale", _npu, "PrivateUse1")
LIB.impl("npu_opsdk_scale", _meta, "Meta")
load_converters("elsewhere_converter")
"""
ELSEWHERE_CONVERTER = """
import torchair
from torchair import ge

import elsewhere


@torchair.register_fx_node_ge_converter(torch.ops.npu.npu_opsdk_scale.default)
def _convert(self, scale=1.0, meta_outputs=None):
    elsewhere.CALLS["converter"] += 1
    return ge.custom_op(
        "NpuOpsdkScale",
        inputs={"self": self},
        outputs=["out"],
        attrs={"scale": ge.attr.Float(scale)},
    )
"""


def test_attached_package_alone_registers_the_missing_pieces(attached, opsdk_cli):
    """Offline with nothing defined first: the package defines the op, the reference
    serves the emulated npu device, and every column passes."""
    run = opsdk_cli("check", attached, "--shapes", SHAPES, json_report=True)
    assert run.code == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert {cell["op"] for cell in run.report["results"]} == {ATTACHED}


def test_attached_package_beside_the_ops_own_library_overrides_nothing(attached, tmp_path):
    (tmp_path / "elsewhere.py").write_text(ELSEWHERE)
    (tmp_path / "elsewhere_converter.py").write_text("import torch\n" + ELSEWHERE_CONVERTER)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import elsewhere
        from opsdk import cli
        code = cli.main(["check", {str(attached)!r}, "--shapes", {SHAPES!r}])
        print(elsewhere.CALLS)
        sys.exit(code)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    calls = eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own dict repr
    # The op's own npu kernel, Meta kernel and converter served every column: the
    # package's reference, fake and converter were not registered over them.
    assert calls["npu"] > 0 and calls["meta"] > 0 and calls["converter"] > 0, calls
