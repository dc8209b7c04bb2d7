"""Third-party warnings and log records are the cell's: recorded on its Result, once each,
never printed past the progress line; a filter set during a cell outlives it.

A throwaway column (this module) warns and logs the way AOTAutograd and TorchAir do:
``warnings.warn``, and a ``torchair``-named logger whose handler writes to a stream.
"""

import io
import logging
import warnings
from types import SimpleNamespace

import pytest
import torch

from opsdk import harness
from opsdk._runtime.device import ensure_npu
from opsdk.harness import columns
from opsdk.harness.cell import CellFailure, Result

NS = "opsdk_unit_cell_warnings"
ensure_npu()
_lib = torch.library.Library(NS, "DEF")
_lib.define("same(Tensor x) -> Tensor")
_lib.impl("same", lambda x: x.clone(), "PrivateUse1")

BOXED = "Your compiler for AOTAutograd is returning a function that doesn't take boxed arguments"
QUIET = "set while the cell ran"  # ignored by a filter the column installs, like an import's
# A child of TorchAir's logger name: the test never creates TorchAir's own logger,
# whose class TorchAir sets when it is imported.
LOGGER = logging.getLogger("torchair.opsdk_unit_test")
# torch_npu's NPUGraph logger (torch_npu/npu/graphs.py): an artifact logger no handler takes,
# so logging prints its records on stderr (logging.lastResort).
NPUGRAPH = torch._logging.getArtifactLogger("torch_npu.npugraph", "cudagraphs")
CAPTURE_FAILED = "NPUGraph: ERROR — capture failed: RuntimeError: sync in capture"
STREAM = io.StringIO()
FAIL: list[str] = []


def run(cell, dump_dir=None) -> None:
    """The noisy column: warns twice alike, logs, and fails when FAIL says so."""
    for _ in range(2):
        warnings.warn(BOXED, UserWarning, stacklevel=1)
    warnings.filterwarnings("ignore", message=QUIET)
    warnings.warn(QUIET, UserWarning, stacklevel=1)
    LOGGER.error("graph fell back")
    LOGGER.error("graph fell back")
    LOGGER.debug("debug output the user asked for")
    NPUGRAPH.error(CAPTURE_FAILED)
    if FAIL:
        raise CellFailure("converter", FAIL.pop())


@pytest.fixture
def noisy_cell(tmp_path):
    registration = columns.register(columns.Column("noisy", __name__, ("kernel",), "eager"))
    handler = logging.StreamHandler(STREAM)
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.DEBUG)
    filters = list(warnings.filters)
    STREAM.seek(0)
    STREAM.truncate()
    package = SimpleNamespace(
        __name__="noisypkg",
        __file__=str(tmp_path / "noisypkg" / "__init__.py"),
        OPS=(torch.ops.opsdk_unit_cell_warnings.same.default,),
    )
    [cell] = harness.cells(package, ["noisy"], ["static"])
    yield cell
    registration.undo()
    LOGGER.removeHandler(handler)
    warnings.filters[:] = filters
    FAIL.clear()


def test_a_cells_warnings_and_logs_are_on_its_result_once_each(noisy_cell, capfd, monkeypatch):
    # As in `opsdk check`'s process: the root logger has no handler (pytest's set aside).
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    result = harness.run_cell(noisy_cell)
    assert result.status == "pass", result.message
    assert result.warnings == (
        f"UserWarning: {BOXED}",
        "torchair.opsdk_unit_test ERROR: graph fell back",
        f"{NPUGRAPH.name} ERROR: {CAPTURE_FAILED}",
    )
    # Nothing reached the terminal but the debug record the user asked for.
    assert STREAM.getvalue() == "debug output the user asked for\n"
    assert capfd.readouterr().err == ""
    # The handler prints again after the cell; the filter the cell set stays.
    LOGGER.error("after the cell")
    assert STREAM.getvalue().endswith("after the cell\n")
    NPUGRAPH.error(CAPTURE_FAILED)
    assert capfd.readouterr().err == f"{CAPTURE_FAILED}\n"  # logging's own way, outside a cell
    with warnings.catch_warnings(record=True) as after:
        warnings.warn(QUIET, UserWarning, stacklevel=1)
    assert after == []


def test_a_failing_cell_keeps_its_warnings(noisy_cell):
    FAIL.append("no GE node")
    result = harness.run_cell(noisy_cell)
    assert (result.status, result.layer, result.message) == ("fail", "converter", "no GE node")
    assert result.warnings[0] == f"UserWarning: {BOXED}"


def test_warnings_survive_the_json_round_trip_of_isolate():
    result = Result("ns::op", "ge", "static", "pass", warnings=("UserWarning: w",))
    assert result.to_json()["warnings"] == ("UserWarning: w",)
    # as json.loads reads it
    again = Result.from_json({**result.to_json(), "warnings": ["UserWarning: w"]})
    assert again == result and hash(again) == hash(result)
