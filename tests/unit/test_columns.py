"""A column is one object: registered once, every part of opsdk asks the registry.

The throwaway columns here are registered by this test alone (this module is their
implementation) and must show up in the CLI's choices, the matrix, run_cell,
coverage and the report's environment with no other edit. run_cell reports
``setup`` only for a SetupError; anything else unexpected is an error in the
column's own layer, with its type and message.
"""

import importlib
from types import SimpleNamespace

import pytest
import torch
from no_torch import without_torch

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
def registered():
    """The built-in columns plus THROWAWAY and NEEDY, for this test only."""
    RAN.clear()
    RAISE.clear()
    with columns.register(THROWAWAY), columns.register(NEEDY):
        yield


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
    """The CLI parser and `opsdk --help` read the columns' facts: the registry loads anew
    with torch unimportable (this module's torch would hide an import of it)."""
    with without_torch():
        fresh = importlib.import_module("opsdk.harness.columns")
        assert fresh.names() == columns.names()
    assert columns.names() == (
        "eager", "opcheck", "aot_eager", "ge", "npugraph_ex", "fusion", "ascendc",
    )  # fmt: skip
    assert columns.compiling() == ("aot_eager", "ge", "npugraph_ex")
    with pytest.raises(ValueError, match="column 'eager' is registered already"):
        columns.register(columns.Column("eager", __name__, (), "eager"))


def test_columns_and_audit_checks_are_judges_of_one_registry():
    from opsdk.audit import AUDIT_SUITE, Check

    assert columns.names(AUDIT_SUITE) == (
        "schema",
        "fake",
        "converter",
        "infer",
        "ascendc",
        "npugraph_ex",
        "registry",
    )
    for judge in (columns.column("ge"), columns.judge("fake", AUDIT_SUITE)):
        assert {"name", "suite", "error_layer", "shape_modes"} <= set(dir(judge))
        assert judge.implementation().__name__.startswith("opsdk.")
    assert columns.judge("converter", AUDIT_SUITE).shape_modes == ("static", "dynamic")
    check_columns = columns.names()
    with columns.register(Check("eager", ("static",))):  # a name is unique in its suite only
        assert columns.judge("eager").suite == "check"
        assert columns.judge("eager", AUDIT_SUITE).suite == AUDIT_SUITE
        assert columns.names() == check_columns and columns.names(AUDIT_SUITE)[-1] == "eager"
    assert "eager" not in columns.names(AUDIT_SUITE)
    with pytest.raises(ValueError, match="audit check 'fake' is registered already"):
        columns.register(Check("fake", ("static",)))


def test_the_infer_check_has_cells_only_where_the_ir_paths_hold_cpp_inference(tmp_path):
    from opsdk.audit import AUDIT_SUITE
    from opsdk.audit.library import Library

    check = columns.judge("infer", AUDIT_SUITE)
    (tmp_path / "op_host").mkdir()
    source = tmp_path / "op_host" / "x_infershape.cpp"
    source.write_text("IMPL_OP_INFERSHAPE(X).InferDataType(InferDtypeX);\n")  # no InferShape
    assert not check.applies(Library("lib", [], infer_roots=()))
    assert not check.applies(Library("lib", [], infer_roots=(tmp_path,)))
    source.write_text("IMPL_OP_INFERSHAPE(X).InferShape(InferShapeX);\n")
    assert check.applies(Library("lib", [], infer_roots=(source,)))
    assert columns.judge("converter", AUDIT_SUITE).applies(Library("lib", []))  # every library


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


def test_a_column_module_is_held_to_its_protocol_on_first_use():
    """A registered column's module must define ``run`` (and ``lowering`` to share a
    trace); a module that does not is a one-line error naming what it lacks."""
    for name in columns.names():
        column = columns.column(name)
        assert isinstance(column.implementation(), columns.ColumnModule)
        assert isinstance(column.implementation(), columns.CompilingModule) == column.compiles
    broken = columns.Column("broken", "opsdk.axes", (), "eager", compiles=True)
    with pytest.raises(TypeError, match=r"^column 'broken': opsdk.axes defines no run"):
        broken.implementation()
    with columns.register(THROWAWAY):
        with pytest.raises(TypeError, match=r"defines no lowering\(spec\)$"):
            columns.column("throwaway").lowering(None)
    with pytest.raises(LookupError, match=r"^no column 'throwaway'; the known ones: eager, "):
        columns.column("throwaway")  # the handle undid the registration
