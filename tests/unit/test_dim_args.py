"""A dimension argument no call changed (#31 item 8): the columns that may change an
argument without recompiling (``eager``, ``opcheck``) move a ``dim``-like int to the case's
other dims, with or without declared specs, so an npu kernel that ignores it fails there
in layer ``eager``; the correct twin passes. In-process, AOT dispatch left to ``aot_eager``
(as in a full run), so nothing is compiled."""

from types import SimpleNamespace

import pytest
import torch

from opsdk import harness
from opsdk._runtime.device import ensure_npu
from opsdk._runtime.spec import parse
from opsdk.harness.core import run_scope
from opsdk.harness.variants.cases import cases
from opsdk.inputs import F32, OneOf, Support, declare_supported

NS = "opsdk_unit_dim_args"
ensure_npu()
_lib = torch.library.Library(NS, "DEF")


def _softmax_(x, dim=-1):
    x.copy_(torch.softmax(x, dim))


def _last_dim_softmax_(x, dim=-1):  # the bug: the kernel always computes along the last dim
    x.copy_(torch.softmax(x, -1))


def _define(name, npu):
    _lib.define(f"{name}(Tensor(a!) x, int dim=-1) -> ()")
    _lib.impl(name, npu, "PrivateUse1")
    _lib.impl(name, _softmax_, "CPU")
    torch.library.register_fake(f"{NS}::{name}", lambda x, dim=-1: None, lib=_lib)
    return getattr(torch.ops.opsdk_unit_dim_args, name).default


# without specs: one case from the schema (F32(2, 3), dim at its default)
IGNORES_DIM, SOFTMAX = _define("ignores_dim", _last_dim_softmax_), _define("softmax", _softmax_)
# with specs declaring the dims
DECLARED_IGNORES = _define("declared_ignores", _last_dim_softmax_)
DECLARED = _define("declared", _softmax_)
for _op in (DECLARED_IGNORES, DECLARED):
    declare_supported(_op, [Support(F32(3, 4, 5), dim=OneOf(2, 0, 1))], non_contiguous=False)


def _results(op, shapes="static"):
    package = SimpleNamespace(__name__="dimpkg", __file__=__file__, OPS=(op,))
    cells = harness.cells(package, ["eager", "opcheck"], [shapes])
    with run_scope.together({"opcheck", "aot_eager"}):
        return {cell.column: harness.run_cell(cell) for cell in cells}


@pytest.mark.parametrize("shapes", ["static", "dynamic"])
@pytest.mark.parametrize(
    ("op", "moved"),
    [(IGNORES_DIM, "dim -1 -> 0 on call 1"), (DECLARED_IGNORES, "dim 2 -> 0 on call 1")],
    ids=["no_specs", "declared"],
)
def test_a_kernel_ignoring_its_dim_fails_in_eager_and_in_opcheck(op, moved, shapes):
    for backend, result in _results(op, shapes).items():
        assert (result.status, result.layer) == ("fail", "eager"), (backend, result.describe())
        assert "call 1: inputs after the call (in-place writes)" in result.message
        assert f"(the harness changed {moved};" in result.message, result.message


@pytest.mark.parametrize("shapes", ["static", "dynamic"])
@pytest.mark.parametrize("op", [SOFTMAX, DECLARED], ids=["no_specs", "declared"])
def test_the_correct_twin_passes_every_moved_dim(op, shapes):
    for backend, result in _results(op, shapes).items():
        assert result.status == "pass", (backend, result.describe())


def test_each_call_after_the_first_moves_the_dim_within_the_case_rank():
    """Calls that differ only in values share opcheck's input signature, so opcheck runs
    the first call and each that moves a dim (a signature of its own)."""
    [case] = cases(parse(str(DECLARED._schema)), "static", "opcheck", vary_from=1)
    assert [c.args[1] for c in case.calls] == [2, 0, 1]
    assert [c.moves_dim for c in case.calls] == [False, True, True]
    [default] = cases(parse(str(SOFTMAX._schema)), "static", "opcheck", vary_from=1)
    assert [c.args[1:] for c in default.calls] == [[-1], [0], [-1]]  # F32(2, 3): -1 is 1
