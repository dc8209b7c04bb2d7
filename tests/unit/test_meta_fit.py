"""The opsdk.meta helper a fake skeleton suggests: read off the schema, and working code."""

import pytest
import torch

from opsdk import meta
from opsdk._runtime import spec
from opsdk.scaffold import meta_fit

# schema, the suggested line, arguments (meta tensors) and what torch's own op returns
FAMILIES = [
    (
        "f(Tensor x, float s) -> Tensor",
        "return meta.same_as(x)",
        {"x": (2, 3), "s": 0.5},
        lambda x, s: x * s,
    ),
    (
        "f(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor",
        "return meta.elementwise(x, y)",
        {"x": (2, 3), "y": (3,)},
        lambda x, y: x + y,
    ),
    (
        "f(Tensor x, int[1]? dim=None, bool keepdim=False) -> Tensor",
        "return meta.reduction(x, dim, keepdim)",
        {"x": (2, 3), "dim": [1], "keepdim": True},
        lambda x, dim, keepdim: x.sum(dim, keepdim),
    ),
    (
        "f(Tensor[] xs, int dim=0) -> Tensor",
        "return meta.cat(xs, dim)",
        {"xs": [(2, 3), (4, 3)], "dim": 0},
        lambda xs, dim: torch.cat(xs, dim),
    ),
    (
        "f(Tensor x, int dim, Tensor index) -> Tensor",
        "return meta.index_select(x, dim, index)",
        {"x": (2, 3), "dim": 1, "index": (5,)},
        lambda x, dim, index: x.index_select(dim, index),
    ),
    (
        "my_matmul(Tensor a, Tensor b) -> Tensor",
        "return meta.matmul(a, b)",
        {"a": (2, 3), "b": (3, 4)},
        lambda a, b: a @ b,
    ),
    (
        "f(Tensor x) -> (Tensor, Tensor)",
        "return meta.same_as(x), meta.same_as(x)",
        {"x": (2, 3)},
        lambda x: (x.clone(), x.clone()),
    ),
]


def _value(name, value):
    if isinstance(value, tuple):
        dtype = torch.int64 if name == "index" else torch.float32
        return torch.empty(value, dtype=dtype, device="meta")
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return [torch.empty(v, device="meta") for v in value]
    return value


@pytest.mark.parametrize(
    ("schema", "line", "args", "torch_op"),
    FAMILIES,
    ids=["same_as", "elementwise", "reduction", "cat", "index_select", "matmul", "two_outputs"],
)
def test_the_suggestion_is_the_family_s_helper_and_runs_as_written(schema, line, args, torch_op):
    lines = meta_fit.suggest(spec.parse(f"ns::{schema}"))
    assert lines[-1] == f"    {line}" and "from opsdk import meta" in " ".join(lines)
    values = {n: _value(n, v) for n, v in args.items()}
    code = f"def fake({', '.join(values)}):\n    {line}\n"
    scope = {"meta": meta}
    exec(code, scope)  # the line the user uncomments, as it stands
    got, expected = scope["fake"](**values), torch_op(**values)
    pairs = list(zip(got, expected, strict=True)) if isinstance(got, tuple) else [(got, expected)]
    assert [(g.shape, g.dtype) for g, _ in pairs] == [(e.shape, e.dtype) for _, e in pairs]


def test_an_inplace_op_is_told_the_check_of_what_it_writes():
    for schema in ("f(Tensor(a!) x, Tensor y) -> ()", "f_(Tensor(a!) x, Tensor y) -> Tensor(a!)"):
        assert meta_fit.suggest(spec.parse(f"ns::{schema}"))[-1] == "    meta.inplace(x, y)"


@pytest.mark.parametrize(
    "schema",
    [
        "f(Tensor(a!) x) -> ()",  # nothing to check: its fake is certain
        "f(Tensor x) -> Tensor[]",  # no helper states a list's length
        "f(Tensor x) -> int",
        "f(Tensor " + "x" * 90 + ") -> Tensor",  # a call longer than a comment line
    ],
)
def test_no_suggestion_where_no_helper_fits(schema):
    assert meta_fit.suggest(spec.parse(f"ns::{schema}")) is None


def test_comment_lines_stay_within_the_generated_line_length():
    names = ", ".join(f"tensor_{i}" for i in range(6))
    op = spec.parse(f"ns::f({', '.join(f'Tensor tensor_{i}' for i in range(6))}) -> Tensor")
    lines = meta_fit.suggest(op)
    assert lines[-1] == f"    return meta.elementwise({names})"
    assert all(len("    # " + line) <= 100 for line in lines), lines
