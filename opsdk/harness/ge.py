"""Column ``ge``: TorchAir GE graph mode (``max-autotune``), checked end to end.

The op goes through the real TorchAir: Dynamo, AOT, the op's converter and
TorchAir's graph passes build a GE graph, which runs on CANN on an NPU host and
on opsdk's GE reference executor offline. The cell checks the numbers against
eager, and the GE graph itself against what TorchAir must produce for the
shape mode (see the seed ``dynamo_dynamic_static_graphs.txt``). An op with a
backward also trains: its backward graph goes through TorchAir GE too, and the
gradients must equal eager's (:mod:`opsdk.harness._training`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from pathlib import Path

from opsdk.harness import _compiled, _ge_dump
from opsdk.harness._training import trainable
from opsdk.harness.model import Cell, CellFailure
from opsdk.offline.torchair import torchair_config, torchair_with_converters
from opsdk.runtime import irdef

NEXT_STEP_GRAPH = "rerun with --dump DIR and compare the GE graph with the FX graph"


def backend():
    return torchair_with_converters().get_npu_backend(
        compiler_config=torchair_config("max-autotune")
    )


def lowering(spec):
    return backend(), lambda: checked_converter(spec)


@dataclasses.dataclass
class Recorded:
    """The GE graphs TorchAir compiled, in order; ``backward`` those compiled while
    autograd ran a backward (AOT autograd compiles the backward graph lazily)."""

    graphs: list = dataclasses.field(default_factory=list)
    backward: list = dataclasses.field(default_factory=list)

    def forward(self, start: int = 0) -> list:
        """The forward graphs among those compiled from the ``start``-th on."""
        return [g for g in self.graphs[start:] if not any(g is b for b in self.backward)]


@contextlib.contextmanager
def recorded_graphs():
    """Collect each ``GeConcreteGraph`` TorchAir compiles (a Python hook, so it
    works the same offline and on an NPU host)."""
    import torch

    from opsdk.offline import patches

    recorded = Recorded()

    def record(graph):
        recorded.graphs.append(graph)
        if torch._C._current_graph_task_id() != -1:
            recorded.backward.append(graph)

    with patches.ge_compile_hooked(record):
        yield recorded


class ConverterContractError(Exception):
    """A converter returned what TorchAir's rules forbid for its op."""


def _returns_problem(spec, result) -> str | None:
    """What is wrong with a converter's result, judged by the op's returns."""
    count = len(spec.returns)
    if count == 0:
        if result is None:
            return None
        what = "its mutated input" if spec.inplace else "a value"
        return (
            f"the converter of {spec.qualname} returned {what}, but the op returns nothing: "
            "an in-place op's converter returns only the op's own outputs (here: none)"
        )
    if count == 1:  # one output: a tensor (or a list of them, for a Tensor[] return)
        return None if result is not None else f"the converter of {spec.qualname} returned None"
    got = len(result) if isinstance(result, (tuple, list)) else 0 if result is None else 1
    if got != count:
        return (
            f"the converter of {spec.qualname} returned {got} outputs, the op returns {count}: "
            "return only the op's own outputs, not the in-place ones"
        )
    return None


@contextlib.contextmanager
def checked_converter(spec):
    """Check every call of the op's registered converter against TorchAir's rules
    (an op without one may still get TorchAir's automatic converter)."""
    from opsdk.offline import patches

    def checking(converter):
        def checked(*args, **kwargs):
            result = converter(*args, **kwargs)
            problem = _returns_problem(spec, result)
            if problem:
                raise ConverterContractError(problem)
            return result

        return checked

    with patches.ge_converter_wrapped(spec.op(), checking):
        yield


def run(cell: Cell, dump_dir: Path | None = None) -> None:
    torchair_with_converters()
    checked = 0

    def check_new_graphs():
        """The forward GE graphs the case compiled (each case compiles its own)."""
        nonlocal checked
        forward, checked = recorded.forward(checked), len(recorded.graphs)
        if not forward:
            raise CellFailure("ge-graph", f"TorchAir compiled no GE graph; {NEXT_STEP_GRAPH}")
        for graph in forward:
            check_graph(cell, graph.graph)

    with recorded_graphs() as recorded, checked_converter(cell.op.spec), warnings.catch_warnings():
        # TorchAir's backward compiler is not boxed; AOT autograd copes, but warns per graph.
        warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd is returning")
        try:
            _compiled.run(
                cell,
                backend(),
                layer="ge-exec",
                compile_layer="converter",
                hint=NEXT_STEP_GRAPH,
                after_case=check_new_graphs,
            )
        finally:
            if dump_dir is not None:
                dump(recorded.graphs, Path(dump_dir) / case_dir(cell.op.name, cell.shapes))
    if trainable(cell.op.spec) and not recorded.backward:
        raise CellFailure(
            "ge-graph",
            f"the op has a backward but TorchAir compiled no backward GE graph; {NEXT_STEP_GRAPH}",
        )


def case_dir(qualname: str, shapes: str) -> str:
    """Where ``--dump`` puts an op's GE case: ``ns.name.overload/ge-SHAPES``."""
    namespace, _, rest = qualname.partition("::")
    name, _, overload = rest.partition(".")
    return f"{namespace}.{name}.{overload or 'default'}/ge-{shapes}"


def dump(graphs, directory: Path) -> None:
    """Per compiled graph: the FX graph TorchAir received, and the GE graph as
    readable Python (one line per node) and as protobuf text."""
    directory.mkdir(parents=True, exist_ok=True)
    for i, graph in enumerate(graphs):
        if graph.fx_graph is not None:
            (directory / f"graph{i}_fx.py").write_text(graph.fx_graph.print_readable(False))
        (directory / f"graph{i}_ge.py").write_text(_ge_dump.readable(graph.graph))
        (directory / f"graph{i}_ge.pbtxt").write_text(str(graph.graph))


def check_graph(cell: Cell, graph) -> None:
    """The GE graph has a node of the op's registered IR, with the IR's inputs and
    required attrs, and inputs shaped per shape mode."""
    spec = cell.op.spec
    irs = {ir.op_type: ir for ir in irdef.for_op(spec.qualname)}
    nodes = [op for op in graph.op if op.type in irs]
    if irs and not nodes:
        types = sorted({op.type for op in graph.op})
        raise CellFailure(
            "ge-graph",
            f"expected a {' or '.join(irs)} node (the op's IR), the GE graph has {types}; "
            "check the converter builds that GE op",
        )
    for node in nodes:
        ir = irs[node.type]
        data_inputs = [i for i in node.input if not i.endswith(":-1")]
        required = [i.name for i in ir.inputs if i.kind == "required"]
        if len(data_inputs) < len(required):
            raise CellFailure(
                "ge-graph",
                f"{node.name} ({ir.op_type}) has {len(data_inputs)} inputs, the IR requires "
                f"{required}; {NEXT_STEP_GRAPH}",
            )
        # An attr the IR gives no default must be set, unless the torch argument it
        # stands for is optional (None leaves it unset).
        optional = {ir.ir_name(a.name) for a in spec.args if a.is_optional}
        missing = [
            a.name
            for a in ir.attrs
            if a.default is None and a.name not in node.attr and a.name not in optional
        ]
        if missing:
            raise CellFailure(
                "ge-graph",
                f"{node.name} ({ir.op_type}) lacks attrs {missing}, which its IR requires; "
                "set them in the converter",
            )
    for data in (op for op in graph.op if op.type == "Data"):
        _check_data(cell.shapes, data)


def _check_data(shapes: str, data) -> None:
    from torchair._ge_concrete_graph.ge_ir_pb2 import DataType

    desc = data.output_desc[0]
    dims = list(desc.shape.dim)
    where = f"Data {data.name} (index {data.attr['index'].i}, shape {dims}, on {desc.device_type})"
    if desc.device_type == "CPU":
        # A host input is a symbolic scalar (int64 []) or SymInt list: dynamic=True graphs
        # only (mark_static keeps scalars symbolic); a static graph bakes Python scalars in
        # as constants.
        if shapes == "static":
            raise CellFailure(
                "ge-graph",
                f"{where}: a dynamic=False graph must bake Python scalars in (Const or "
                "attr), not take them as host inputs",
            )
        # A SymInt[] argument with symbols in it comes as one int64 list, of shape [N].
        if len(dims) > 1 or desc.dtype != DataType.Value("DT_INT64"):
            raise CellFailure(
                "ge-graph",
                f"{where}: a host input must be a symbolic scalar or SymInt list, int64 of "
                "shape [] or [N]; tensors of the op must be npu tensors",
            )
        return
    if desc.device_type != "NPU":
        raise CellFailure("ge-graph", f"{where}: npu tensors must be placed on NPU")
    if shapes == "dynamic" and dims and all(d >= 0 for d in dims):
        raise CellFailure(
            "ge-graph",
            f"{where}: dynamic=True must leave symbolic dims as -1; a size was specialized, "
            "rerun with TORCH_LOGS=dynamic to see which guard did it",
        )
    if shapes != "dynamic" and any(d < 0 for d in dims):
        raise CellFailure(
            "ge-graph",
            f"{where}: {shapes} shapes must be concrete in the GE graph; {NEXT_STEP_GRAPH}",
        )
