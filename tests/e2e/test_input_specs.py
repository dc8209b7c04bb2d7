"""Input specs end to end: what the cases they derive catch (in-process tests of the
spec API and the case generation are in tests/unit/test_inputs.py)."""

import re

from scaffolded import added, edit, implemented

SPECS_PY = """
import torch
from opsdk._runtime.inputs import F16, F32, Support, declare_supported

declare_supported(
    torch.ops.{ns}.my_add.default,
    [Support(F32(2, 3), F32(2, 3)), Support(F16(2, 3), F16(2, 3))],{extra}
)
"""


def _package(scaffolds, tmp_path, kernel: str, extra: str = ""):
    ns = "specs_t"  # each `opsdk check` runs in its own process: tests can share it
    pkg = scaffolds.copy(tmp_path, "my_add", namespace=ns)
    (pkg / "my_add" / "specs.py").write_text(SPECS_PY.format(ns=ns, extra=extra))
    kernels = pkg / "my_add" / "kernels.py"
    text = kernels.read_text()
    old = "    return torch.add(x, y).contiguous()"
    assert old in text
    kernels.write_text(text.replace(old, kernel))
    return pkg


def test_tolerance_override_is_applied(scaffolds, tmp_path, opsdk_cli):
    off = "    return (torch.add(x, y) + 1e-3).contiguous()"
    strict = _package(scaffolds, tmp_path / "strict", off)
    run = opsdk_cli("check", strict, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["status"], cell["layer"]) == (1, "fail", "eager"), cell
    assert "case F32(2, 3), F32(2, 3): call 0: output" in cell["message"]

    loose = _package(
        scaffolds,
        tmp_path / "loose",
        off,
        extra="\n    tolerances={torch.float32: (0.0, 2e-3), torch.float16: (0.0, 2e-2)},",
    )
    run = opsdk_cli("check", loose, "--backend", "eager", "--shapes", "static", json_report=True)
    assert run.code == 0, run.stdout + run.stderr


def test_a_kernel_wrong_for_one_declared_dtype_fails_naming_the_case(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(
        scaffolds,
        tmp_path,
        "    out = torch.sub(x, y) if x.dtype == torch.float16 else torch.add(x, y)\n"
        "    return out.contiguous()",
    )
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case F16(2, 3), F16(2, 3): call 0: output")


def test_non_contiguous_case_catches_a_kernel_that_assumes_contiguous_memory(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(scaffolds, tmp_path, "    return (x.view(-1) + y.view(-1)).view(x.shape)")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case non-contiguous F32(2, 3), F32(2, 3): ")
    assert "view" in cell["message"]


# ----- scalars and sizes: correct ops pass every cell, broken ones fail where they break --

SHAPED_SPECS = """
from opsdk.inputs import F32, Dim, Support, declare_supported

from .schema import OP

{body}
"""
CAT_BIAS_SPECS = """a, b = Dim("a", 2), Dim("b", 3)
declare_supported(OP, [Support([F32(a, 8), F32(b, 8)], F32(a + b))])"""
MM_SPECS = """m, k, n = Dim("m", 2), Dim("k", 3), Dim("n", 4)
declare_supported(
    OP,
    [
        Support(F32(m, k), F32(k, n)),  # the inner dim k is one size
        Support(F32(3, m, k), F32(k, n)),  # broadcast over a fixed batch
        # positional sizes: 2 and 2 would be one size to Dynamo without static_dims marked
        Support(F32(2, 2, static_dims=(1,)), F32(2, 3, static_dims=(0,))),
    ],
)"""


def _with_specs(op_dir, body):
    (op_dir / "specs.py").write_text(SHAPED_SPECS.format(body=body))
    init = op_dir / "__init__.py"
    init.write_text(init.read_text() + "\nfrom . import specs  # noqa: E402, F401\n")


def test_ops_with_dims_and_related_sizes_pass_every_cell(scaffolds, tmp_path, opsdk_cli):
    # No specs: x is F32(2, 3) and dim keeps its 1 (once npugraph_ex made it 2: IndexError).
    pkg = implemented(
        scaffolds,
        tmp_path,
        "my_sum",
        "my_sum(Tensor x, int dim=1) -> Tensor",
        "return x.sum(dim)",
        fake="meta.reduction(x, dim)",
    )
    concat = added(
        pkg,
        "my_cat_bias",
        "my_cat_bias(Tensor[] xs, Tensor bias) -> Tensor",
        "return torch.cat(xs) + bias[:, None]",
        fake="meta.cat(xs)",
    )
    _with_specs(concat, CAT_BIAS_SPECS)
    _with_specs(
        added(
            pkg, "my_mm", "my_mm(Tensor a, Tensor b) -> Tensor", "return a @ b", "meta.matmul(a, b)"
        ),
        MM_SPECS,
    )
    run = opsdk_cli("check", pkg, json_report=True)
    failed = [
        (r["op"], r["column"], r["shapes"], r["layer"], r["message"])
        for r in run.report["results"]
        if r["status"] != "pass"
    ]
    assert run.code == 0 and not failed, failed or run.stdout + run.stderr
    assert len(run.report["results"]) == 3 * 5 * 3


def test_a_cached_scalar_fails_eager_and_a_baked_one_fails_ge(scaffolds, tmp_path, opsdk_cli):
    pkg = implemented(
        scaffolds,
        tmp_path,
        "my_scale",
        "my_scale(Tensor x, float alpha, SymInt n) -> Tensor",
        "return x * alpha + n",
    )
    # The npu kernel keeps the first scalars it sees (the reference stays right).
    kernels = pkg / "my_scale" / "kernels.py"
    text, count = re.subn(
        r"(def my_scale_npu\(.*?)return x \* alpha \+ n",
        r'\1return x * _SEEN.setdefault("alpha", alpha) + _SEEN.setdefault("n", n)',
        kernels.read_text(),
        flags=re.S,
    )
    assert count == 1
    kernels.write_text(text + "\n_SEEN = {}\n")
    # A correct kernel whose converter bakes n in instead of passing the graph's input.
    added(pkg, "my_mul_n", "my_mul_n(Tensor x, SymInt n) -> Tensor", "return x * n")
    edit(pkg / "my_scale" / "my_mul_n" / "converter.py", "int64_input(n)", "int64_input(2)")
    run = opsdk_cli(
        "check", pkg, "--backend", "eager,ge,npugraph_ex", "--shapes", "dynamic", json_report=True
    )
    cells = {(r["op"].split("::")[1], r["column"]): r for r in run.report["results"]}
    verdicts = {key: (r["status"], r["layer"]) for key, r in cells.items()}
    assert verdicts == {
        ("my_scale", "eager"): ("fail", "eager"),
        # the graph takes n as an input: the kernel's stale n shows on the call that changes it
        ("my_scale", "ge"): ("fail", "eager"),
        ("my_scale", "npugraph_ex"): ("fail", "eager"),
        ("my_mul_n", "eager"): ("pass", None),
        ("my_mul_n", "ge"): ("fail", "ge-exec"),
        ("my_mul_n", "npugraph_ex"): ("pass", None),  # a new n recaptures (a warning)
    }, verdicts
    eager = cells["my_scale", "eager"]["message"]
    assert eager.startswith("call 1: output: values differ"), eager
    assert "(the harness changed alpha 0.5 -> 1.5, n 2 -> 3 on call 1;" in eager
    assert "n 2 -> 3 on call 2" in cells["my_scale", "npugraph_ex"]["message"]  # VARY_FROM
    baked = cells["my_mul_n", "ge"]["message"]
    assert baked.startswith("call 1: output: values differ") and "n 2 -> 3 on call 1" in baked
