"""A column is one object: registered once, every part of opsdk asks the registry.

The throwaway columns here are registered by this test alone (this module is their
implementation) and must show up in the CLI's choices, the matrix, run_cell,
coverage and the report's environment with no other edit. run_cell reports
``setup`` only for a SetupError; anything else unexpected is an error in the
column's own layer, with its type and message.
"""

from types import SimpleNamespace

import pytest
import torch

from opsdk import harness, report
from opsdk._runtime.device import ensure_npu
from opsdk.cli import parser
from opsdk.errors import OpsdkError, SetupError
from opsdk.harness import columns
from opsdk.harness.cell import CellFailure
from opsdk.harness.run import coverage

NS = "opsdk_unit_columns"
ensure_npu()
_lib = torch.library.Library(NS, "DEF")
_lib.define("twice(Tensor x) -> Tensor")
_lib.impl("twice", lambda x: x * 2, "PrivateUse1")  # a kernel, no fake function

RAN = []  # the cells this module ran as a column
RAISE: list[BaseException] = []  # what the next run raises


def run(cell, dump_dir=None) -> None:
    """The throwaway columns' implementation."""
    RAN.append(cell)
    if RAISE:
        raise RAISE.pop()


def environment() -> dict:
    return {"throwaway_column": "reported"}


THROWAWAY = columns.Column("throwaway", __name__, ("kernel",), "eager")
NEEDY = columns.Column("needy", __name__, ("kernel", "fake"), "aot")


@pytest.fixture
def registered(monkeypatch):
    """The built-in columns plus THROWAWAY and NEEDY, for this test only."""
    monkeypatch.setattr(columns, "_registry", dict(columns._registry))
    columns.register(THROWAWAY)
    columns.register(NEEDY)
    RAN.clear()
    RAISE.clear()


@pytest.fixture
def package(tmp_path):
    return SimpleNamespace(
        __name__="colpkg",
        __file__=str(tmp_path / "colpkg" / "__init__.py"),
        OPS=(torch.ops.opsdk_unit_columns.twice.default,),
    )


def _cell(package, backend):
    [cell] = harness.cells(package, [backend], ["static"])
    return cell


def test_builtin_columns_load_without_torch_in_matrix_order():
    assert columns.names() == (
        "eager", "opcheck", "aot_eager", "ge", "npugraph_ex", "fusion", "ascendc",
    )  # fmt: skip
    assert columns.compiling() == ("aot_eager", "ge", "npugraph_ex")
    with pytest.raises(ValueError, match="registered already"):
        columns.register(columns.Column("eager", __name__, (), "eager"))


def test_columns_and_audit_checks_are_judges_of_one_registry(monkeypatch):
    from opsdk.audit import AUDIT_SUITE, Check

    assert columns.names(AUDIT_SUITE) == (
        "schema",
        "fake",
        "converter",
        "infer",
        "npugraph_ex",
        "registry",
    )
    for judge in (columns.get("ge"), columns.get("fake", AUDIT_SUITE)):
        assert {"name", "suite", "error_layer", "shape_modes"} <= set(dir(judge))
        assert judge.implementation().__name__.startswith("opsdk.")
    assert columns.get("converter", AUDIT_SUITE).shape_modes == ("static", "dynamic")
    monkeypatch.setattr(columns, "_registry", dict(columns._registry))
    check_columns = columns.names()
    columns.register(Check("eager", ("static",)))  # a name is unique within its suite only
    assert (
        columns.get("eager").suite == "check"
        and columns.get("eager", AUDIT_SUITE).suite == AUDIT_SUITE
    )
    assert columns.names() == check_columns and columns.names(AUDIT_SUITE)[-1] == "eager"
    with pytest.raises(ValueError, match="'fake' is registered already among the audit judges"):
        columns.register(Check("fake", ("static",)))


def test_the_infer_check_has_cells_only_where_the_ir_paths_hold_cpp_inference(tmp_path):
    from opsdk.audit import AUDIT_SUITE
    from opsdk.audit.library import Library

    check = columns.get("infer", AUDIT_SUITE)
    (tmp_path / "op_host").mkdir()
    source = tmp_path / "op_host" / "x_infershape.cpp"
    source.write_text("IMPL_OP_INFERSHAPE(X).InferDataType(InferDtypeX);\n")  # no InferShape
    assert not check.applies(Library("lib", [], infer_roots=()))
    assert not check.applies(Library("lib", [], infer_roots=(tmp_path,)))
    source.write_text("IMPL_OP_INFERSHAPE(X).InferShape(InferShapeX);\n")
    assert check.applies(Library("lib", [], infer_roots=(source,)))
    assert columns.get("converter", AUDIT_SUITE).applies(Library("lib", []))  # every library


def test_a_registered_column_is_in_every_part_of_opsdk(registered, package):
    assert columns.names()[-2:] == ("throwaway", "needy")
    args = parser().parse_args(["check", "pkg"])
    assert args.column[-2:] == ["throwaway", "needy"]
    matrix = harness.cells(package, shapes=["static"])
    # fusion has cells only for an op with a fusion pattern, ascendc only for one with
    # AscendC sources, and this one has neither
    selected = [n for n in columns.names() if n not in ("fusion", "ascendc")]
    assert [c.column for c in matrix] == selected
    result = harness.run_cell(_cell(package, "throwaway"))
    assert (result.status, result.column) == ("pass", "throwaway"), result.describe()
    assert [c.column for c in RAN] == ["throwaway"]
    spec = matrix[0].op.spec
    coverage.require(spec, "throwaway")
    with pytest.raises(CellFailure, match="no fake function, which needy needs") as failed:
        coverage.require(spec, "needy")
    assert failed.value.layer == "fake"
    needy = harness.run_cell(_cell(package, "needy"))
    assert (needy.status, needy.layer) == ("fail", "fake") and RAN == [matrix[-2]]
    environment = report.environment({"throwaway"})
    assert environment["throwaway_column"] == "reported"
    assert "throwaway_column" not in report.environment({"eager"})


class _UsageSlip(OpsdkError):
    """A usage error raised where no column expects one."""


@pytest.mark.parametrize(
    ("raised", "layer"),
    [
        (_UsageSlip("bad name"), "eager"),
        (RuntimeError("kernel exploded"), "eager"),
        (SetupError("no TorchAir here"), "setup"),
    ],
)
def test_only_a_setup_error_is_reported_as_setup(registered, package, raised, layer):
    RAISE.append(raised)
    result = harness.run_cell(_cell(package, "throwaway"))
    assert (result.status, result.layer) == ("error", layer), result.describe()
    if layer != "setup":
        assert result.message == f"{type(raised).__name__}: {raised}"
