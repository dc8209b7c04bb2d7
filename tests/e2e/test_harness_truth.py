"""Harness truth (#13): correct ops of many kinds pass every cell (no false positives), and
ops with one deliberate bug each fail in the layer docs/guide.md §10 documents, and only
there. Each suite is one package and one matrix run, shared by its tests."""

import pytest
from scaffolded import added

SPECS = """
from opsdk.inputs import F32, I64, Dim, Fixed, OneOf, Range, Support, declare_supported

from .schema import OP

{body}
"""

# name: (schema, kernel body (npu and reference), fake, specs body or None)
CORRECT = {
    "my_sum": (
        "my_sum(Tensor x, int dim=1, bool keepdim=False) -> Tensor",
        "return x.sum(dim, keepdim).contiguous()",
        "meta.reduction(x, dim, keepdim)",
        "declare_supported(OP, [Support(F32(2, 3), dim=OneOf(0, 1), keepdim=OneOf(False, True))])",
    ),
    "my_softmax": (
        "my_softmax(Tensor x, int dim=-1) -> Tensor",
        "return torch.softmax(x, dim).contiguous()",
        "meta.same_as(x)",
        None,  # no specs: inputs from the schema
    ),
    "my_topk": (
        "my_topk(Tensor x, int k) -> (Tensor values, Tensor indices)",
        "values, indices = x.topk(k)\n    return values.contiguous(), indices.contiguous()",
        "(x.new_empty((*x.shape[:-1], k)), x.new_empty((*x.shape[:-1], k), dtype=torch.int64))",
        "declare_supported(OP, [Support(F32(4, Dim('n', 5)), k=Fixed(2))])",
    ),
    "my_cat": (
        "my_cat(Tensor[] xs) -> Tensor",
        "return torch.cat(xs)",
        "meta.cat(xs)",
        "a, b = Dim('a', 2), Dim('b', 3)\n"
        "declare_supported(OP, [Support([F32(a, 4), F32(b, 4), F32(1, 4)])])",
    ),
    "my_matmul": (
        "my_matmul(Tensor a, Tensor b) -> Tensor",
        "return (a @ b).contiguous()",
        "meta.matmul(a, b)",
        "m, k, n = Dim('m', 2), Dim('k', 3), Dim('n', 4)\n"
        "declare_supported(OP, [Support(F32(m, k), F32(k, n)), Support(F32(3, m, k), F32(k, n))])",
    ),
    "my_rms_norm": (
        "my_rms_norm(Tensor x, Tensor gamma, float eps=1e-06) -> (Tensor y, Tensor rstd)",
        "rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)\n"
        "    return (x * rstd * gamma).contiguous(), rstd.contiguous()",
        "(meta.same_as(x), meta.reduction(x, -1, True))",
        "h = Dim('h', 8)\n"
        "declare_supported(OP, [Support(F32(Dim('t', 2), h), F32(h), eps=Fixed(1e-6))])",
    ),
    "my_clamp": (
        "my_clamp(Tensor x, Scalar lo, Scalar hi) -> Tensor",
        "return x.clamp(lo, hi).contiguous()",
        "meta.same_as(x)",
        "declare_supported(OP, [Support(F32(2, 3), lo=Range(-1.0, 0.0), hi=Range(0.5, 2.0))])",
    ),
    "my_reduce": (
        'my_reduce(Tensor x, str mode="sum") -> Tensor',
        'out = x.sum(-1) if mode == "sum" else x.mean(-1)\n    return out.contiguous()',
        "meta.reduction(x, -1)",
        "declare_supported(OP, [Support(F32(2, 3), mode=OneOf('sum', 'mean'))])",
    ),
    "my_add_norm": (  # in place, and a fresh tensor returned
        "my_add_norm(Tensor(a!) x, Tensor y) -> Tensor",
        "x.add_(y)\n    return x.abs().sum(-1)",
        "meta.reduction(x, -1)",
        None,
    ),
    "my_kv_update": (  # a KV cache written at int64 positions
        "my_kv_update(Tensor(a!) cache, Tensor index, Tensor value) -> ()",
        "cache.index_copy_(0, index, value)",
        None,  # the scaffold's fake: meta.inplace
        "c, n = Dim('c', 8), Dim('n', 2)\n"
        "declare_supported(OP, [Support(F32(c, 4), I64(n, value_range=(0, 8)), F32(n, 4))])",
    ),
    "my_scale": (  # no specs at all
        "my_scale(Tensor x, float alpha) -> Tensor",
        "return (x * alpha).contiguous()",
        "meta.same_as(x)",
        None,
    ),
}


def _add(pkg, name, schema, kernel, fake, specs):
    op_dir = added(pkg, name, schema, kernel, fake)
    if specs is not None:
        (op_dir / "specs.py").write_text(SPECS.format(body=specs))
        init = op_dir / "__init__.py"
        init.write_text(init.read_text() + "\nfrom . import specs  # noqa: E402, F401\n")
    return op_dir


@pytest.fixture(scope="module")
def correct_run(scaffolds, tmp_path_factory, opsdk_cli_module):
    # the default add of `opsdk new` (broadcasting, 0-dim, empty, four dtypes) is the twelfth
    pkg = scaffolds.copy(tmp_path_factory.mktemp("correct"), "my_add", namespace="truth_ok")
    for name, (schema, kernel, fake, specs) in CORRECT.items():
        _add(pkg, name, schema, kernel, fake, specs)
    return opsdk_cli_module("check", pkg, json_report=True)


def test_twelve_correct_ops_pass_every_cell(correct_run):
    results = correct_run.report["results"]
    failed = [
        (r["op"], r["backend"], r["shapes"], r["status"], r["layer"], r["message"])
        for r in results
        if r["status"] != "pass"
    ]
    assert not failed, "\n".join(map(str, failed))
    ops = {r["op"].split("::")[1] for r in results}
    assert ops == {"my_add", *CORRECT} and len(ops) == 12
    assert len(results) == 12 * 5 * 3, len(results)  # every column in every shape mode
    assert correct_run.code == 0
