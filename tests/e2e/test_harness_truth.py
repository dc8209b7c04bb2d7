"""Harness truth (#13): correct ops of many kinds pass every cell (no false positives), and
ops with one deliberate bug each fail in the layer docs/guide/failures.md documents, and only
there. Each suite is one package and one matrix run, shared by its tests."""

import pytest
from scaffolded import added

from opsdk.axes import SHAPE_MODES
from opsdk.scaffold import NewRequest, into

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
    # the op alone: usage contexts have their own suite (test_context_matrix.py)
    return opsdk_cli_module("check", pkg, "--contexts", "none", json_report=True)


def test_twelve_correct_ops_pass_every_cell(correct_run):
    results = correct_run.report["results"]
    failed = [
        (r["op"], r["column"], r["shapes"], r["status"], r["layer"], r["message"])
        for r in results
        if r["status"] != "pass"
    ]
    assert not failed, "\n".join(map(str, failed))
    ops = {r["op"].split("::")[1] for r in results}
    assert ops == {"my_add", *CORRECT} and len(ops) == 12
    assert len(results) == 12 * 5 * 3, len(results)  # every column in every shape mode
    assert correct_run.code == 0


# ----- broken ops: one bug each, caught in its layer and nowhere else -----

ADD = ("{name}(Tensor x, Tensor b) -> Tensor", "return (x + b).contiguous()")
SUB = ("{name}(Tensor x, Tensor b) -> Tensor", "return (x - b).contiguous()")
SCALE = ("{name}(Tensor x, float alpha) -> Tensor", "return (x * alpha).contiguous()")

# name: (schema and correct kernel, fake, the bug: (file, old, new) edits, first match only)
BROKEN = {
    "fake_shape": (ADD, "x.new_empty(x.shape[1:])", []),
    "fake_dtype": (ADD, "meta.same_as(x, dtype=torch.float16)", []),
    "fake_bcast": (ADD, "meta.same_as(x)", []),  # specs broadcast x over y
    "wrong_values": (ADD, "meta.same_as(x)", [("kernels", "(x + b)", "(x + b + 1e-3)")]),
    "non_contiguous": (
        ADD,
        "meta.same_as(x)",
        [("kernels", "(x + b)", "(x.view(-1) + b.view(-1)).view(x.shape)")],
    ),
    "unmarked_mutation": (
        ("{name}(Tensor x, Tensor b) -> Tensor", "x.add_(b)\n    return x * 2"),
        "meta.same_as(x)",
        [],
    ),
    "alias_return": (("{name}(Tensor x) -> Tensor", "return x"), "meta.same_as(x)", []),
    # the schema says x is written; no call changes it (every comparison agrees: both
    # kernels write nothing)
    "unwritten": (("{name}(Tensor(a!) x, Tensor b) -> ()", "pass"), None, []),
    "swapped_inputs": (
        SUB,
        "meta.same_as(x)",
        [("converter", 'inputs={"x": x, "b": b}', 'inputs={"x": b, "b": x}')],
    ),
    "dropped_attr": (SCALE, "meta.same_as(x)", [("converter", '"alpha": attr.Float(alpha),', "")]),
    "mistyped_attr": (
        SCALE,
        "meta.same_as(x)",
        [("converter", "attr.Float(alpha)", "attr.Int(alpha)")],
    ),
    "host_sync": (
        SCALE,
        "meta.same_as(x)",
        [("kernels", "return (x * alpha)", "return (x * alpha * (x.abs().max().item() >= 0))")],
    ),
    "cached_scalar": (
        SCALE,
        "meta.same_as(x)",
        [("kernels", "(x * alpha)", '(x * _SEEN.setdefault("alpha", alpha))')],
    ),
    "specialized_sizes": (ADD, "x.new_empty([int(s) for s in x.shape])", []),
    "stale_global": (  # an output buffer kept in a global, returned again by the next call
        ADD,
        "meta.same_as(x)",
        [
            (
                "kernels",
                "return (x + b).contiguous()",
                "out = torch.empty_like(x, memory_format=torch.contiguous_format)\n"
                "    return _SEEN.setdefault((x.shape, x.dtype), out).copy_(x + b)",
            )
        ],
    ),
}
BROKEN_SPECS = {
    "fake_bcast": "declare_supported(OP, [Support(F32(3), F32(4, 3))], non_contiguous=False)",
    "non_contiguous": "declare_supported(OP, [Support(F32(2, 3), F32(2, 3))])",
}
# bug -> the layer each column fails in ("column" for both shape modes, "column-mode" for
# one); a column not named passes. The crash and hang bugs are in test_isolate.py (layer
# `process` in every cell of the op, under --isolate).
EXPECTED_LAYERS = {
    "fake_shape": {"opcheck": "fake", "ge": "ge-exec"},  # aot_eager runs the real kernel
    "fake_dtype": {"opcheck": "fake", "ge": "ge-exec"},
    "fake_bcast": {"opcheck": "fake", "ge": "ge-exec"},
    "wrong_values": {c: "eager" for c in ("eager", "aot_eager", "ge", "npugraph_ex")},  # values
    # the npu kernel raises on the non-contiguous case: layer eager in every column
    "non_contiguous": {c: "eager" for c in ("eager", "opcheck", "aot_eager", "ge", "npugraph_ex")},
    # opcheck's test_schema runs where shapes are concrete only: a schema has no shapes
    "unmarked_mutation": {
        "opcheck-static": "schema",
        "opcheck-mark_static": "schema",
        "ge": "ge-exec",
        "npugraph_ex": "replay",
    },
    # AOT Autograd's aliasing check runs on a compiled graph's first call (an error whatever
    # $CI says, see harness.core.compiled); GE runs the op natively, where no check sees it.
    "alias_return": {"opcheck": "schema", "aot_eager": "schema"},
    "unwritten": {"eager": "eager"},
    "swapped_inputs": {"ge": "ge-exec"},
    "dropped_attr": {"ge": "converter"},
    "mistyped_attr": {"ge": "converter"},
    "host_sync": {"npugraph_ex": "capture"},
    # a float is baked into compiled graphs (a new value recompiles): only eager varies it
    "cached_scalar": {"eager": "eager"},
    "specialized_sizes": {
        "aot_eager-dynamic": "recompile",
        "ge-dynamic": "recompile",
        "npugraph_ex-dynamic": "recompile",
    },
    "wrong_backward": {"opcheck-static": "autograd"},  # gradcheck runs in the static cell
    # the next call with the same shapes changes the previous output (dynamic: new shapes)
    "stale_global": {"eager-static": "eager", "eager-mark_static": "eager"},
}


@pytest.fixture(scope="module")
def broken_run(scaffolds, tmp_path_factory, opsdk_cli_module):
    pkg = scaffolds.copy(tmp_path_factory.mktemp("broken"), "my_add", namespace="truth_bad")
    for bug, ((schema, kernel), fake, edits) in BROKEN.items():
        op_dir = _add(
            pkg, f"my_{bug}", schema.format(name=f"my_{bug}"), kernel, fake, BROKEN_SPECS.get(bug)
        )
        for file, old, new in edits:
            path = op_dir / f"{file}.py"
            text = path.read_text()
            assert old in text, (bug, old)
            path.write_text(
                text.replace(old, new, 1) + ("\n_SEEN = {}\n" if "_SEEN" in new else "")
            )
    into.add(NewRequest("my_wrong_backward", autograd=True), pkg)  # the add, trainable
    path = next(pkg.glob("*/my_wrong_backward")) / "autograd.py"
    path.write_text(path.read_text().replace("return grad_out.sum", "return 2 * grad_out.sum", 1))
    return opsdk_cli_module("check", pkg, json_report=True)


def _row(bug):
    expected = EXPECTED_LAYERS[bug]
    return {
        f"{column}-{mode}": expected.get(f"{column}-{mode}", expected.get(column))
        for column in ("eager", "opcheck", "aot_eager", "ge", "npugraph_ex")
        for mode in SHAPE_MODES
    }


def test_each_bug_fails_in_its_layer_and_nowhere_else(broken_run):
    rows: dict[str, dict] = {}
    for r in broken_run.report["results"]:
        if r["context"] is not None:  # an in-place op's usage contexts: their own suite
            continue
        op = r["op"].split("::")[1].removeprefix("my_")
        assert (r["status"] == "pass") == (r["layer"] is None), r
        rows.setdefault(op, {})[f"{r['column']}-{r['shapes']}"] = r["layer"]
    assert set(rows) == {"add", *EXPECTED_LAYERS}
    wrong = {  # bug -> {cell: (expected layer, measured layer)}
        bug: {c: (want, rows[bug][c]) for c, want in _row(bug).items() if rows[bug][c] != want}
        for bug in EXPECTED_LAYERS
    }
    assert not any(wrong.values()), {bug: diff for bug, diff in wrong.items() if diff}
    assert set(rows["add"].values()) == {None}  # the package's correct op: no collateral


def test_messages_name_the_cause(broken_run):
    def message(bug, cell):
        [r] = broken_run.cells(op=f"truth_bad::my_{bug}", column=cell, shapes="static")
        return r["message"]

    assert "Argument x is not defined to alias output" in message("alias_return", "opcheck")
    assert "attr 'alpha'" in message("dropped_attr", "ge")
    assert "converter.py:" in message("mistyped_attr", "ge")
    assert "aten.item.default" in message("host_sync", "npugraph_ex")
    assert "alpha 0.5 -> 1.5 on call 1" in message("cached_scalar", "eager")
    assert message("non_contiguous", "eager").startswith("case non-contiguous F32(2, 3)")
    assert "gradcheck" in message("wrong_backward", "opcheck")
    assert "call 1 changed what call 0 returned" in message("stale_global", "eager")
    assert "writes 'x' in place, but none of its" in message("unwritten", "eager")
    assert "aliasing check" in message("alias_return", "aot_eager")
