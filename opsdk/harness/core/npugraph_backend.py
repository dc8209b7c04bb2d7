"""npugraph_ex's backend as the compiled columns use it (column ``npugraph_ex`` replays
the op; ``fusion`` compiles a pattern through it), what of its failures is the machine's
rather than the op's, and what a report records of it."""

from __future__ import annotations

import contextlib
import traceback
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from opsdk.errors import SetupError
from opsdk.harness.cell import CellSkipped
from opsdk.harness.failures import chain, first_line
from opsdk.offline import torchair as bringup

__all__ = ["backend", "environment", "raise_if_setup", "rebuilt_outputs_unwarned"]

# What npugraph_ex stands on: an import failure in these is the machine's, not the op's.
_STACK = ("torch_npu", "torchair", "npugraph_ex")
# What torch_npu's lazy torchair / npugraph_ex modules add to an import failure.
_LAZY_IMPORT_FAILED = "An error occurred when import"
# Where TorchAir's and npugraph_ex's fusion patterns live: they rewrite graphs to
# torch_npu's own kernels (torch.ops.npu.*), which only an installed torch_npu has.
_PATTERN_DIRS = ("/npugraph_ex/patterns/", "/torchair/patterns/")
# npugraph_ex pickles each FX graph it compiles; with input_inplace_pass off, the
# auto_functionalized node of a custom in-place op stays and cannot be pickled
# (torch-npu 2.13.0): a limit of npugraph_ex, not of the op.
_SERIALIZER = "/npugraph_ex/_acl_concrete_graph/acl_graph_cache_utils.py"


def _raised_in(err: BaseException, *dirs: str) -> bool:
    frames = traceback.extract_tb(err.__traceback__)
    return any(d in f.filename.replace("\\", "/") for f in frames for d in dirs)


def raise_if_setup(err: BaseException) -> None:
    """Raise :class:`SetupError` when ``err`` says npugraph_ex could not be set up here
    (torch_npu, TorchAir or npugraph_ex failed to import, a fusion pattern needs
    torch_npu's kernels): a fault of the machine, not of the op."""
    for e in chain(err):
        if isinstance(e, SetupError):
            raise e
        name = getattr(e, "name", None) or ""
        if _LAZY_IMPORT_FAILED in str(e) or (
            isinstance(e, ImportError)
            and (name.partition(".")[0] in _STACK or _raised_in(e, "/torch_npu/"))
        ):
            raise SetupError(
                f"npugraph_ex could not be imported: {first_line(e)}; check the torch_npu "
                "(or, offline, the TorchAir cache: opsdk fetch-torchair) this runs on"
            ) from err
        if _raised_in(e, _SERIALIZER):
            raise CellSkipped(
                f"npugraph_ex cannot compile this graph: {first_line(e)} (raised by its graph "
                f"serialization, {_SERIALIZER.lstrip('/')}): a limit of this npugraph_ex, "
                "not of the op, so the cell checks nothing here"
            ) from err
        if _raised_in(e, *_PATTERN_DIRS):
            raise SetupError(
                f"npugraph_ex's pattern fusion failed: {first_line(e)}; its fusions use "
                "torch_npu's own kernels (torch.ops.npu.*): register none of torch_npu's "
                "patterns where torch_npu is not installed (opsdk keeps them out offline)"
            ) from err


def backend(**options: Any) -> Callable[..., Any]:
    """npugraph_ex's backend with ``options`` (``force_eager``...); a failure to set it up
    here is a :class:`SetupError`."""
    try:
        return bringup.get_backend(**options)
    except Exception as err:
        raise_if_setup(err)
        raise


@contextlib.contextmanager
def rebuilt_outputs_unwarned() -> Iterator[None]:
    """npugraph_ex's warning about "retained memory of acl graph output" silenced: it warns
    whenever it rebuilds a replay's outputs, whatever holds them (this column keeps the
    previous outputs on purpose, to check the documented overwrite); it says nothing of
    the op. Checked against torch-npu 2.13.0."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*retained memory of acl graph output")
        yield


def environment() -> dict:
    try:
        info = bringup.describe()
    except SetupError as err:  # the cells say so too; the report must still be written
        return {"npugraph_ex": f"unavailable: {err}"}
    return {
        "npugraph_ex": info["npugraph_ex"],
        "npugraph_ex_runs_on": info["torch_npu"],
        "npugraph_ex_offline_options": info["options"],
        "fusion_patterns": info["patterns"],
    }
