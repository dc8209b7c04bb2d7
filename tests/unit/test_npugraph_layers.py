"""The npugraph_ex column's layers: what stops npugraph_ex itself from running is
``setup`` (never ``capture`` with a host-sync hint), and ladder messages read cleanly."""

from __future__ import annotations

import pytest

from opsdk.errors import SetupError
from opsdk.harness.cell import CellFailure, CellSkipped
from opsdk.harness.columns import npugraph_ex
from opsdk.harness.core import npugraph_backend

NPUGRAPH_EX = "/cache/torch_npu-2.13.0/torch_npu/dynamo/npugraph_ex"


def missing_npu_kernel() -> AttributeError:
    """A fresh one each time: a raise adds to the traceback the exception carries."""
    return AttributeError("'_OpNamespace' 'npu' object has no attribute 'npu_add_rms_norm'")


def raised_in(path: str, error: BaseException, wrapped_in: str | None = None) -> BaseException:
    """``error`` as raised by code of the file ``path``, optionally as the cause of a
    RuntimeError (as torch.compile wraps a backend's error)."""
    try:
        exec(compile("raise error", path, "exec"), {"error": error})
    except BaseException as raised:
        if wrapped_in is None:
            return raised
        outer = RuntimeError(wrapped_in)
        outer.__cause__ = raised
        return outer
    raise AssertionError("unreachable")


SETUP = {
    "pattern fusion": raised_in(
        f"{NPUGRAPH_EX}/patterns/add_rms_norm_cast.py", missing_npu_kernel(), "backend failed"
    ),
    "npugraph_ex import": ModuleNotFoundError(
        "No module named 'npugraph_ex.x'", name="npugraph_ex.x"
    ),
    "torch_npu import": raised_in(
        f"{NPUGRAPH_EX}/__init__.py", ImportError("cannot import name y")
    ),
    "lazy torchair": RuntimeError("boom\nAn error occurred when import `torchair` and ..."),
    "setup below": raised_in("/x/opsdk/_runtime/locator.py", SetupError("no wheel"), "wrapped"),
}


@pytest.mark.parametrize("case", sorted(SETUP))
def test_what_stops_npugraph_ex_itself_is_setup(case):
    with pytest.raises(SetupError) as raised:
        npugraph_backend.raise_if_setup(SETUP[case])
    assert "; ;" not in str(raised.value)


OP_FAULTS = {
    "kernel error": raised_in("/home/me/my_op/kernels.py", RuntimeError("bad shape")),
    "kernel import": raised_in("/home/me/my_op/kernels.py", ImportError("no scipy", name="scipy")),
    "npu op missing outside patterns": raised_in(
        f"{NPUGRAPH_EX}/npu_fx_compiler.py", missing_npu_kernel()
    ),
}


@pytest.mark.parametrize("case", sorted(OP_FAULTS))
def test_an_op_fault_is_left_to_the_ladder(case):
    npugraph_backend.raise_if_setup(OP_FAULTS[case])  # does not raise


@pytest.mark.parametrize("ending", ["; ", ".", ""])
def test_ladder_messages_join_with_one_separator(ending):
    failure = CellFailure("replay", f"call 1: output: values differ (...){ending}")
    joined = npugraph_ex._then(failure, "force_eager fixes it")
    assert joined == "call 1: output: values differ (...); force_eager fixes it"


def test_a_graph_npugraph_ex_cannot_serialize_is_a_skip_naming_npugraph_ex():
    """input_inplace_pass=False leaves an auto_functionalized node npugraph_ex's graph
    serialization cannot pickle (torch-npu 2.13.0): nothing the op can fix."""
    error = raised_in(
        f"{NPUGRAPH_EX}/_acl_concrete_graph/acl_graph_cache_utils.py",
        RuntimeError("<pybind11 function_record> is not pickleable."),
        "backend failed",
    )
    with pytest.raises(CellSkipped, match="a limit of this npugraph_ex, not of the op"):
        npugraph_backend.raise_if_setup(error)


def test_a_replay_s_shared_output_buffer_may_hold_nan():
    """npugraph_ex's outputs share their buffer from replay to replay: NaN in it (an op
    giving rsqrt(-1)) is the same value, anything else that differs is a failure."""
    import torch

    out = torch.tensor([float("nan"), 1.0])
    npugraph_ex._check_overwrite(out, out, 1)  # the same buffer, NaN included: no failure
    moved = out[:1]  # the same storage, another shape: the replay returned something else
    with pytest.raises(CellFailure, match="holds different values"):
        npugraph_ex._check_overwrite(out, moved, 1)
