"""Column ``ge``: TorchAir GE graph mode (``max-autotune``), checked end to end.

The op goes through the real TorchAir: Dynamo, AOT, the op's converter and
TorchAir's graph passes build a GE graph, which runs on CANN on an NPU host and
on opsdk's GE reference executor offline. The cell checks the numbers against
eager, and the GE graph itself against what TorchAir must produce for the
shape mode (see the seed ``dynamo_dynamic_static_graphs.txt``). An op with a
backward also trains: its backward graph goes through TorchAir GE too, and the
gradients must equal eager's (:mod:`opsdk.harness.core.training`).
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import torch

from opsdk._runtime import irdef
from opsdk.errors import SetupError
from opsdk.harness import graph_hook
from opsdk.harness.cell import Cell, CellFailure, case_dir
from opsdk.harness.core import compiled, ge_infer
from opsdk.harness.core.ge_backend import backend, recorded_graphs
from opsdk.harness.core.training import trainable
from opsdk.harness.torchair_graphs import SYM_DTYPES, fx_inputs, op_arguments
from opsdk.harness.variants import profiles
from opsdk.harness.variants.cases import Case, tensors_of
from opsdk.offline.ge import dump as ge_dump
from opsdk.offline.torchair import torchair_with_converters

NEXT_STEP_GRAPH = "rerun with --dump DIR and compare the GE graph with the FX graph"


def lowering(spec):
    return backend(), lambda: checked_converter(spec)


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
    from opsdk._runtime import patches

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

    def check_new_graphs(case: Case):
        """The forward GE graphs the case compiled (each case compiles its own)."""
        nonlocal checked
        forward, checked = recorded.forward(checked), len(recorded.graphs)
        if not forward:
            raise CellFailure("ge-graph", f"TorchAir compiled no GE graph; {NEXT_STEP_GRAPH}")
        for graph in forward:
            check_graph(cell, graph.graph)
            check_inputs(cell, graph, case)
        inferred.check()
        graph_hook.case_done()

    with (
        recorded_graphs() as recorded,
        checked_converter(cell.op.spec),
        ge_infer.held(cell.op.spec.qualname, cell.shapes) as inferred,
        warnings.catch_warnings(),
    ):
        # TorchAir's backward compiler is not boxed; AOT autograd copes, but warns per graph.
        warnings.filterwarnings("ignore", message="Your compiler for AOTAutograd is returning")
        directory = Path(dump_dir) / case_dir(cell.op.name, cell.label) if dump_dir else None
        with dumped(recorded.received, directory), graph_hook.collected(cell):
            compiled.run(
                cell,
                backend(cell.profile),
                layer="ge-exec",
                compile_layer="converter",
                hint=NEXT_STEP_GRAPH,
                after_case=check_new_graphs,
            )
    profiles.require_reached(cell.profile, "ge", [g.config for g in recorded.graphs])
    if trainable(cell.op.spec) and not recorded.backward:
        raise CellFailure(
            "ge-graph",
            f"the op has a backward but TorchAir compiled no backward GE graph; {NEXT_STEP_GRAPH}",
        )


@contextlib.contextmanager
def dumped(graphs: list, directory: Path | None):
    """:func:`dump` ``graphs`` as they are when the block ends, passed or failed (a failed
    cell's graphs are what the user needs), unless ``directory`` is None. A dump that
    cannot be written is ``setup``, except after a failure of the block: that one is
    the finding, and the machine's problem must not hide it."""
    if directory is None:
        yield
        return
    try:
        yield
    except BaseException:
        with contextlib.suppress(SetupError):
            dump(graphs, directory)
        raise
    dump(graphs, directory)


def dump(graphs, directory: Path) -> None:
    """Per compiled graph: the FX graph TorchAir received, and the GE graph as
    readable Python (one line per node) and as protobuf text.

    The folder was checked up front (:mod:`opsdk._outputs`); a write that fails now
    (a full disk, the folder removed) is the machine's problem, not the op's: a
    :class:`SetupError` naming the file, the OS error and the fix."""
    texts = {}
    for i, graph in enumerate(graphs):
        if graph.fx_graph is not None:
            texts[f"graph{i}_fx.py"] = graph.fx_graph.print_readable(False)
        texts[f"graph{i}_ge.py"] = ge_dump.readable(graph.graph)
        texts[f"graph{i}_ge.pbtxt"] = str(graph.graph)
    path = directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            path = directory / name
            path.write_text(text)
    except OSError as err:
        raise SetupError(
            f"--dump cannot write {path} ({err.strerror or err}); free space or drop --dump"
        ) from None


def check_graph(cell: Cell, graph) -> None:
    """The GE graph has a node of the op's registered IR, with the IR's inputs and
    required attrs (the graph's own inputs: :func:`check_inputs`)."""
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
                {node.name: f"{len(data_inputs)} inputs, the IR requires {len(required)}"},
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
                {node.name: f"lacks attrs {', '.join(missing)}"},
            )


def check_inputs(cell: Cell, concrete, case: Case) -> None:
    """The GE graph's inputs (``Data``) against TorchAir's rules for the shape mode (the
    seed ``dynamo_dynamic_static_graphs.txt``): npu tensors placed on NPU, with concrete
    dims in ``static``/``mark_static`` and ``-1`` dims in ``dynamic``; in ``dynamic`` and
    ``mark_static`` a symbolic scalar is a host input (int64 of shape ``[]`` on CPU) that
    reaches the op node; a ``static`` graph has no host inputs. ``concrete`` is the
    ``GeConcreteGraph`` TorchAir compiled, ``case`` the calls it ran."""
    graph, fixed = concrete.graph, _fixed_shapes(case)
    placeholders = [n for n in concrete.fx_graph.graph.nodes if n.op == "placeholder"]
    data_of: dict = {}  # FX placeholder -> the Data that carries it into the GE graph
    for data in (op for op in graph.op if op.type == "Data"):
        carried = [placeholders[i] for i in fx_inputs(graph, data)]
        data_of.update((p, data) for p in carried)
        _check_data(cell.shapes, data, [p.meta.get("val") for p in carried], fixed)
    _check_scalars_reach_the_op(cell.op.spec, concrete, data_of)


def _fixed_shapes(case: Case) -> set[tuple[int, ...]]:
    """The shapes of the case's tensors that are the same in every call: a dynamic graph
    has no symbol for them (Dynamo specializes sizes 0 and 1, and static dims)."""
    per_call = [[tuple(t.shape) for t in tensors_of([c.args, c.kwargs])] for c in case.calls]
    return {shapes[0] for shapes in zip(*per_call, strict=True) if len(set(shapes)) == 1}


def _check_data(shapes: str, data, values: list, fixed: set) -> None:
    """One ``Data`` against the rules for ``shapes``; ``values`` are the FX values it
    carries (empty if TorchAir recorded none), ``fixed`` the shapes no call changes."""
    from torchair._ge_concrete_graph.ge_ir_pb2 import DataType

    desc = data.output_desc[0]
    dims = list(desc.shape.dim)
    where = f"Data {data.name} (index {data.attr['index'].i}, shape {dims}, on {desc.device_type})"
    symbols = [type(v) for v in values if type(v) in SYM_DTYPES]
    if symbols or (not values and desc.device_type == "CPU"):
        # A host input: one symbolic scalar (shape []), or symbols packed into a list ([N]).
        if shapes == "static":
            raise CellFailure(
                "ge-graph",
                f"{where}: a dynamic=False graph must bake Python scalars in (Const or "
                "attr), not take them as host inputs",
                {data.name: "a host input in a static graph"},
            )
        dtype = SYM_DTYPES[symbols[0]] if symbols else "DT_INT64"
        if desc.device_type != "CPU" or len(dims) > 1 or desc.dtype != DataType.Value(dtype):
            raise CellFailure(
                "ge-graph",
                f"{where}: a symbolic scalar is a host input, {dtype[3:].lower()} of shape [] "
                "(or [N] for a list) placed on CPU; tensors of the op must be npu tensors",
                {data.name: f"a symbolic scalar must be {dtype[3:].lower()} [] on CPU"},
            )
        return
    if desc.device_type != "NPU":
        raise CellFailure(
            "ge-graph",
            f"{where}: npu tensors must be placed on NPU",
            {data.name: f"an npu tensor placed on {desc.device_type or 'no device'}"},
        )
    # Only an input whose sizes change must keep a -1 dim: Dynamo specializes sizes 0 and
    # 1 (a one-token index [1] stays [1]), and a size it is told is static.
    specialized = bool(dims) and all(d >= 0 for d in dims) and tuple(dims) not in fixed
    if shapes == "dynamic" and specialized:
        raise CellFailure(
            "ge-graph",
            f"{where}: dynamic=True must leave symbolic dims as -1; a size was specialized, "
            "rerun with TORCH_LOGS=dynamic to see which guard did it",
            {data.name: "a size that changes was specialized: no -1 dim"},
        )
    if shapes != "dynamic" and any(d < 0 for d in dims):
        raise CellFailure(
            "ge-graph",
            f"{where}: {shapes} shapes must be concrete in the GE graph; {NEXT_STEP_GRAPH}",
            {data.name: f"a -1 dim in a {shapes} graph"},
        )


def _symbolic_placeholders(value) -> list:
    """The FX placeholders of symbolic scalars in an argument (or its list)."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return [
        v
        for v in values
        if isinstance(v, torch.fx.Node)
        and v.op == "placeholder"
        and type(v.meta.get("val")) in SYM_DTYPES
    ]


def _check_scalars_reach_the_op(spec, concrete, data_of: dict) -> None:
    """Each symbolic scalar argument of the op comes from the host input TorchAir made
    of it. A converter that bakes the value in leaves that Data unused, TorchAir drops
    it, and the graph would run with the first call's value forever."""
    graph, irs = concrete.graph, {ir.op_type: ir for ir in irdef.for_op(spec.qualname)}
    op_types = list(irs)
    # Without a registered IR the op node is unknown: then the Data must feed any node.
    producers = {op.name: op for op in graph.op}
    todo = [op for op in graph.op if op.type in op_types or (not op_types and op.type != "Data")]
    reached = set()
    while todo:
        for edge in todo.pop().input:
            name, _, port = edge.rpartition(":")
            if port != "-1" and name in producers and name not in reached:
                reached.add(name)
                todo.append(producers[name])
    types = {a.name: a.type for a in spec.args}
    for node in concrete.fx_graph.graph.nodes:
        arguments = op_arguments(node, spec) if node.op == "call_function" else None
        for name, value in (arguments or {}).items():
            for placeholder in _symbolic_placeholders(value):
                data = data_of.get(placeholder)
                if data is not None and data.name in reached:
                    continue
                helper = (
                    "int64_input" if types.get(name, "").startswith("SymInt") else "scalar_input"
                )
                into = " or ".join(op_types) + " node" if op_types else "graph"
                symbol = placeholder.meta["val"]
                marks = {placeholder.name: f"symbolic {name} ({symbol}): no GE input carries it"}
                marks |= _baked(graph, irs, name)
                raise CellFailure(
                    "ge-graph",
                    f"argument {name} of {spec.qualname} is symbolic "
                    f"({symbol}), but no host input carries it into the "
                    f"{into}: the converter baked its value in (TorchAir then drops the "
                    f"unused Data); pass it on as a GE input: opsdk.converters.{helper}({name})",
                    marks,
                )


def _baked(graph, irs: dict, argument: str) -> dict[str, str]:
    """Per node of the op, what feeds it the input that stands for torch ``argument``
    (a baked-in scalar's Const), or the node itself when nothing does: with a note."""
    marks = {}
    for node in (op for op in graph.op if op.type in irs):
        name = irs[node.type].ir_name(argument)
        data = [i for i in node.input if not i.endswith(":-1")]
        fed = [e for d, e in zip(node.input_desc, data, strict=False) if d.name == name]
        if fed:
            marks[fed[0].rpartition(":")[0]] = f"{argument} baked in: read it from a host input"
        else:
            marks[node.name] = f"no input {name}"
    return marks
