"""The first test `opsdk new` writes (tests/test_OP.py): how it calls the op."""

from opsdk._runtime import spec
from opsdk.scaffold._context import _test_args


def _call(schema: str) -> list[tuple]:
    return [
        (a["name"], a["make"] or a["value"], a["keyword"])
        for a in _test_args(spec.parse(f"ns::{schema}"))
    ]


def test_an_argument_after_one_left_to_its_default_is_passed_by_keyword():
    assert _call("f(Tensor x, float a=1.0, Tensor? w=None, *, int k) -> Tensor") == [
        ("x", "torch.randn(2, 3)", False),
        ("w", "torch.randn(2, 3)", True),  # a tensor even where optional, as opsdk check
        ("k", "2", True),
    ]


def test_values_are_the_default_case_as_python():
    assert _call("f(Tensor[] xs, ScalarType d, int[2] k, str m) -> Tensor") == [
        ("xs", "[torch.randn(2, 3), torch.randn(2, 3)]", False),
        ("d", "torch.float32", False),
        ("k", "[2, 2]", False),
        ("m", "''", False),
    ]
