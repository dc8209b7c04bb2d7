"""The audit on a library without converters: the columns it lays out, and the npugraph_ex
check's proof that a declared write survives the compiled graph."""

from types import SimpleNamespace

import pytest
import torch

from opsdk.audit import matrix, meta_kernel
from opsdk.audit.checks import npugraph_ex
from opsdk.harness.cell import CellFailure

_LIB = torch.library.Library("t_audit_modes", "FRAGMENT")
_LIB.define("upd(Tensor(a!) x, Tensor y) -> ()")
UPD = torch.ops.t_audit_modes.upd.default
torch.library.register_fake("t_audit_modes::upd", lambda x, y: None, lib=_LIB)
# vllm-ascend's mla_preprocess, dispatch_ffn_combine: the Meta returns the written input
_LIB.define("ret_out(Tensor x, Tensor! out) -> Tensor")
_LIB.impl("ret_out", lambda x, out: out, "Meta")
RET_OUT = torch.ops.t_audit_modes.ret_out.default


def _library(**converters):
    ops = [
        SimpleNamespace(op=UPD, qualname=f"ns::{n}", converter=c, spec=None)
        for n, c in converters.items()
    ]
    return SimpleNamespace(name="lib", ops=ops)


def test_ops_without_a_converter_have_no_converter_cells_said_once():
    some = _library(a="conv.py:3", b=None, c=None)
    cells = matrix.cells(some, ["schema", "converter"], ["static"])
    assert [c.column for c in cells] == ["schema", "converter", "schema", "schema"]
    [line] = matrix.left_out(some, ["schema", "converter"])
    assert line.startswith("converter: not laid out: 2 of 3 ops have no TorchAir converter")
    none = _library(a=None)
    assert matrix.left_out(none, ["converter"])[0].startswith(
        "converter: not laid out: no op of lib has a TorchAir converter;"
    )
    assert matrix.left_out(_library(a="conv.py:3"), ["converter"]) == []
    assert matrix.left_out(none, ["schema", "fake"]) == []  # not asked for: nothing to say


def test_the_stand_in_marks_a_written_input_and_a_lost_mark_is_a_finding():
    x, y = torch.zeros(3), torch.ones(3)
    meta_kernel.kernel(UPD)(x, y)
    assert bool((x == meta_kernel.WRITTEN).all())
    op = SimpleNamespace(qualname="t_audit_modes::upd")
    npugraph_ex._check_written(op, {"x": x}, 1, "replay")
    with pytest.raises(CellFailure, match=r"call 2 \(replay\): t_audit_modes::upd writes x"):
        npugraph_ex._check_written(op, {"x": torch.zeros(3)}, 2, "replay")


def test_an_op_whose_only_cells_that_ran_read_its_registration_is_not_audited():
    from opsdk.harness.cell import Result

    def cell(op, column, status, message=""):
        return Result(op, column, "static", status, message=message)

    results = [
        cell("ns::read_only", "schema", "pass"),
        cell("ns::read_only", "registry", "pass"),
        cell("ns::read_only", "fake", "skip", "not audited: its Meta refuses every case"),
        cell("ns::traced", "registry", "pass"),
        cell("ns::traced", "fake", "pass"),
        cell("ns::asked_registry_only", "registry", "pass"),  # --checks registry
        cell("ns::unread", "registry", "skip", "not audited: its C++ does not build"),
    ]
    assert matrix.not_audited(results) == {
        "ns::read_only": "its Meta refuses every case",
        "ns::unread": "its C++ does not build",
    }


@pytest.mark.parametrize(
    ("command", "columns", "shapes", "said"),
    [
        ("audit", ["registry"], ["dynamic"], "registry runs static shapes only (--shapes)"),
        ("check", ["ascendc"], ["dynamic"], "ascendc runs static shapes only (--shapes)"),
        ("check", ["fusion"], ["static"], "fusion has cells only for an op with a fusion pattern"),
    ],
)
def test_an_empty_selection_names_the_reason_that_holds(command, columns, shapes, said):
    from opsdk import matrix_run

    settings = matrix_run.Settings(command=command, target="t", columns=columns, shapes=shapes)
    assert matrix_run._why_no_cells(settings).startswith(said)


def test_the_stand_in_returns_the_input_its_meta_returns_as_the_kernel_it_describes():
    """A fresh tensor there (the schema's word) was copied back over the written input by
    npugraph_ex, which had traced the return as that input: a write "lost" that the
    library's kernel, returning the input as its Meta does, keeps (the schema check's
    finding is the defect)."""
    x, out = torch.zeros(3), torch.zeros(3)
    assert meta_kernel.kernel(RET_OUT)(x, out) is out
    assert meta_kernel.kernel(RET_OUT)(x, out=out) is out
    assert bool((out == meta_kernel.WRITTEN).all())
