"""Offline stand-in for TorchAir's native module ``torchair.core._torchair``.

TorchAir's Python code (Dynamo backend, AOT, converters, graph passes) runs
unchanged; only this pybind module, which links CANN, is replaced. It answers
GE IR definition queries from :mod:`opsdk._runtime.irdef` as CANN would, and its
``TorchNpuGraphBase`` plays the GE session: ``load`` parses and validates the
serialized ``ModelDef`` TorchAir hands over, ``run`` executes it with
:mod:`opsdk.offline.ge.executor` and returns outputs under GE's contract (one
tensor per ``output_dtypes`` entry, ``assigned_outputs`` written in place and
returned as those very tensors, as TorchAir expects for in-place ops).

Every graph TorchAir loads is recorded (:func:`loaded_graphs`) so a harness can
check and dump the GE graph a compiled call produced.

Install with :func:`install` before ``import torchair``: TorchAir's
``TorchNpuGraph`` takes its base class from this module at import time
(:func:`opsdk.offline.torchair.import_torchair` does both).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from opsdk._runtime import irdef
from opsdk.errors import OpFault, SetupError
from opsdk.offline import ge

MODULE_NAME = "torchair.core._torchair"


class NotAvailableOffline(SetupError):
    """A ``_torchair`` entry point that needs CANN or a device was called offline."""


class GeSessionError(OpFault):
    """The GE session contract was broken (run before load, outputs that do not
    match what TorchAir declared, ...)."""


def install() -> None:
    """Register this module as ``torchair.core._torchair`` (idempotent)."""
    sys.modules[MODULE_NAME] = sys.modules[__name__]


# --- IR definitions and CANN compatibility ---------------------------------------------

_MISSING_IR: list[str] = []
_STANDARD: list[Callable[[str], irdef.IrDef | None]] = []


def know_standard_ops(lookup: Callable[[str], irdef.IrDef | None]) -> None:
    """Answer for the op types ``lookup`` defines too, after the registered ones: CANN's
    standard ops (``Fill``, ``GroupedMatmul``), which an NPU host's CANN holds."""
    if lookup not in _STANDARD:
        _STANDARD.append(lookup)


def get_registered_ir_def(op_type: str):
    """CANN's answer for ``op_type``: ``("SUCCESS", inputs, outputs, attrs)`` for a
    registered IrDef (else a standard op's, :func:`know_standard_ops`), else
    ``("ERROR", [], [], [])``, on which TorchAir's
    ``ge.custom_op`` raises "No AscendIR <op_type> was found to be registered"
    (and ``custom_op_pre_scan`` considers generating a converter). Misses are
    recorded in :func:`missing_ir_defs` so a harness can say which IR is missing."""
    ir = irdef.lookup(op_type)
    for lookup in _STANDARD:
        ir = ir or lookup(op_type)
    if ir is None:
        if op_type not in _MISSING_IR:
            _MISSING_IR.append(op_type)
        return ("ERROR", [], [], [])
    return ir.as_torchair_answer()


def missing_ir_defs() -> list[str]:
    """Op types TorchAir asked for that have no GE IR definition registered, first ask first."""
    return list(_MISSING_IR)


def check_cann_compat(optype, runtime_optional_inputs, runtime_optional_attrs) -> str:
    """ "" means compatible: the IR definitions in the registry are this 'CANN' version's."""
    return ""


# --- Engine lifecycle ------------------------------------------------------------------------

ENGINE_OPTIONS: dict[str, str] = {}
"""The GE init options TorchAir passed (``ge_run_with_torch_npu``, ``ge.exec.deviceId``, ...)."""


def InitializeGraphEngine(options) -> None:
    ENGINE_OPTIONS.update(options)


def FinalizeGraphEngine() -> None:
    ENGINE_OPTIONS.clear()


def SetDebugLogPath(path: str) -> None:
    """The native layer's own log file; there is no native layer to log offline."""


def StupidRepeat(word: str, times: int) -> str:
    return word * times


def _needs_cann(name: str):
    def unavailable(*args, **kwargs):
        raise NotAvailableOffline(
            f"torchair.core._torchair.{name} needs CANN and an NPU; it is not available offline"
        )

    unavailable.__name__ = name
    return unavailable


# Entry points TorchAir references for dumping, export, llm_datadist, static kernels and
# device printing: present so TorchAir imports, failing clearly if called offline.
GetSocName = _needs_cann("GetSocName")
AclopStartDumpArgs = _needs_cann("AclopStartDumpArgs")
AclopStopDumpArgs = _needs_cann("AclopStopDumpArgs")
AclmdlSetDump = _needs_cann("AclmdlSetDump")
InitDeviceStdoutChannel = _needs_cann("InitDeviceStdoutChannel")
export = _needs_cann("export")
as_torch_tensors = _needs_cann("as_torch_tensors")


class TorchDataType(enum.IntEnum):
    """torch dtypes as GE data types (ge::DataType numbering, as ``torchair.ge.DataType``);
    TorchAir's llm_datadist builds a lookup table from it at import time."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT8 = 2
    INT32 = 3
    UINT8 = 4
    INT16 = 6
    UINT16 = 7
    UINT32 = 8
    INT64 = 9
    UINT64 = 10
    FLOAT64 = 11
    BOOL = 12
    COMPLEX64 = 16
    COMPLEX128 = 17
    BF16 = 27
    COMPLEX32 = 33


# --- The GE session ----------------------------------------------------------------------


@dataclass
class LoadedGraph:
    """What TorchAir handed to ``load`` and what happened to it since."""

    name: str
    model: object  # ge_ir_pb2.ModelDef
    options: dict
    input_placements: list  # per Data index: 1 = device, 0 = host
    output_dtypes: list  # ge::DataType numbering
    executor_type: int  # 0 = TorchAir's CPU executor, 1 = NPU executor (torch_npu loaded)
    hint_input_shapes: list = field(default_factory=list)
    hint_output_shapes: list = field(default_factory=list)
    compiled: bool = False
    runs: int = 0
    error: str | None = None  # why load() rejected the graph

    @property
    def graph(self):
        """The ``GraphDef``."""
        return self.model.graph[0]

    def op_types(self) -> list[str]:
        return [op.type for op in self.graph.op]


_LOADED: list[LoadedGraph] = []


def loaded_graphs() -> list[LoadedGraph]:
    """Every graph ``load``ed in this process (rejected ones too), oldest first."""
    return list(_LOADED)


def clear_loaded_graphs() -> None:
    _LOADED.clear()


def _model_def_class():
    from torchair._ge_concrete_graph.ge_ir_pb2 import ModelDef

    return ModelDef


class TorchNpuGraphBase:
    """The GE session for one graph, with ``tng::TorchNpuGraphBase``'s methods."""

    def __init__(self, name: str = ""):
        self._name = str(name)
        self._loaded: LoadedGraph | None = None
        self._executor: ge.GeGraphExecutor | None = None

    def load(self, serialized_graph, options, input_placements, output_dtypes, executor_type):
        model = _model_def_class()()
        model.ParseFromString(bytes(serialized_graph))
        loaded = LoadedGraph(
            name=self._name,
            model=model,
            options=dict(options),
            input_placements=list(input_placements),
            output_dtypes=list(output_dtypes),
            executor_type=int(executor_type),
        )
        _LOADED.append(loaded)
        try:
            if len(model.graph) != 1:
                raise ge.GeGraphError(
                    f"graph {self._name}: a ModelDef must hold one graph, not {len(model.graph)}"
                )
            self._executor = ge.GeGraphExecutor(model.graph[0])
        except ge.GeGraphError as err:
            loaded.error = str(err)
            raise
        self._loaded = loaded

    def set_hint_shape(self, inputs_shape, outputs_shape):
        loaded = self._require_loaded("set_hint_shape")
        loaded.hint_input_shapes = [list(s) for s in inputs_shape]
        loaded.hint_output_shapes = [list(s) for s in outputs_shape]

    def compile(self):
        self._require_loaded("compile").compiled = True

    def auto_tune(self, args):
        """AOE tuning needs CANN; offline there is nothing to tune."""
        self._require_loaded("auto_tune")

    def summary(self) -> str:
        loaded = self._require_loaded("summary")
        return "\n".join(
            [
                f"Summary of graph id: {loaded.name}",
                f"input placements: {loaded.input_placements}",
                f"hint inputs shape: {loaded.hint_input_shapes}",
                f"hint outputs shape: {loaded.hint_output_shapes}",
                f"output dtypes : {loaded.output_dtypes}",
                f"executor type : {loaded.executor_type}",
            ]
        )

    def run(self, args):
        """``args`` is ``(inputs, assigned_outputs, stream)``; execution is synchronous,
        so the stream is not needed."""
        inputs, assigned_outputs, _stream = args
        loaded = self._require_loaded("run")
        outputs = self._executor.run(list(inputs))
        results = _apply_output_contract(loaded, outputs, assigned_outputs)
        loaded.runs += 1
        return results

    def _require_loaded(self, what: str) -> LoadedGraph:
        if self._loaded is None:
            raise GeSessionError(f"graph {self._name}: {what}() called before load()")
        return self._loaded


def _apply_output_contract(loaded: LoadedGraph, outputs, assigned_outputs) -> list:
    """Check outputs against what TorchAir declared (``output_dtypes``, the FX
    output shapes) and write ``assigned_outputs`` in place, returning those very
    tensors, as GE does for outputs TorchAir maps onto mutated inputs."""
    expected = loaded.output_dtypes
    if len(outputs) != len(expected):
        raise GeSessionError(
            f"graph {loaded.name}: NetOutput has {len(outputs)} outputs, "
            f"output_dtypes declares {len(expected)}"
        )
    for i, (out, ge_dtype) in enumerate(zip(outputs, expected, strict=True)):
        want = ge.torch_dtype_from_ge(ge_dtype)
        if out.dtype != want:
            raise GeSessionError(
                f"graph {loaded.name}: output {i} is {out.dtype}, TorchAir expects {want}"
            )
        hint = loaded.hint_output_shapes[i] if i < len(loaded.hint_output_shapes) else []
        if hint and (
            len(hint) != out.dim()
            or any(h >= 0 and h != s for h, s in zip(hint, out.shape, strict=True))
        ):
            raise GeSessionError(
                f"graph {loaded.name}: output {i} has shape {list(out.shape)}, "
                f"the FX graph expects {hint}"
            )
    if not assigned_outputs:
        return list(outputs)
    if len(assigned_outputs) != len(outputs):
        raise GeSessionError(
            f"graph {loaded.name}: {len(assigned_outputs)} assigned outputs for {len(outputs)}"
        )
    results = []
    for i, (out, target) in enumerate(zip(outputs, assigned_outputs, strict=True)):
        if target is None:
            results.append(out)
            continue
        if target.shape != out.shape or target.dtype != out.dtype:
            raise GeSessionError(
                f"graph {loaded.name}: assigned output {i} is {target.dtype}{list(target.shape)}, "
                f"the graph computes {out.dtype}{list(out.shape)}"
            )
        with torch.no_grad():
            target.copy_(out)
        results.append(target)
    return results
