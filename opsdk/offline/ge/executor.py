"""A reference executor for GE IR graphs: runs a ``GraphDef`` node by node on tensors.

Offline there is no Graph Engine, so the ``ModelDef`` TorchAir builds is run
here instead: every GE op type gets a small torch kernel with GE's semantics
(inputs by position, attributes by name), and every custom op type registered
in :mod:`opsdk._runtime.irdef` runs through the CPU kernel of the torch op its
``IrDef.torch_op`` names, which is that op's reference implementation (before a
built-in of the same type: a package's ``ReduceSum`` is its own).

What the executor promises, as GE does:

- the graph is checked when it is built (edges point at existing outputs, op
  types are known, custom op nodes match their IR definition), so a bad graph
  fails at ``load`` naming the node;
- outputs are fresh contiguous tensors, except that an op output with the same
  name as one of its inputs is a *ref* output (GE's in-place convention): the
  op writes into that input's memory, which TorchAir relies on after removing
  redundant ``TensorMove`` copies;
- an op type it has no kernel for is an error naming the op type and node,
  never a guess;
- it computes on the device its inputs are on (the emulated npu device or CPU),
  custom ops excepted: their reference kernel is the CPU one.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import _disable_current_modes

from opsdk._runtime import irdef
from opsdk.offline.ge import kernels, observe
from opsdk.offline.ge.custom_op import _CustomOp
from opsdk.offline.ge.errors import GeExecutionError, GeGraphError
from opsdk.offline.ge.kernels import Kernel, Node
from opsdk.offline.ge.proto import GRAPH_OPS, decode_const, torch_dtype_from_proto

# Built-in ops whose output GE infers as their first input's shape: what TorchAir puts
# before a custom node (a TensorMove copying an in-place op's input) leaves its own
# output's shape to GE.
_SAME_SHAPE = {"TensorMove", "Identity", "Cast"}


@dataclass(frozen=True)
class AtCompile:
    """A node's input as GE hands it to the node's InferShape when it compiles the graph:
    the shape it inferred for the producer's output (-1 for a symbolic dim) and, from a
    Const, its value (the data a value-depend input is read from)."""

    shape: tuple[int, ...]
    const: torch.Tensor | None = None


def supported_op_types() -> list[str]:
    """The built-in GE op types the executor runs (custom ones: opsdk.irdef)."""
    return kernels.op_types() + sorted(GRAPH_OPS)


@dataclass
class _Step:
    node: Node
    inputs: list  # (producer name, output index) | None for an absent optional input
    run: Kernel | None


def _parse_edge(ref: str, node_name: str):
    """'name:idx' -> (name, idx); '' -> None (absent optional input)."""
    if ref == "":
        return None
    name, sep, index = ref.rpartition(":")
    if not sep or not index.lstrip("-").isdigit():
        raise GeGraphError(f"node {node_name}: malformed input {ref!r}")
    return name, int(index)


class GeGraphExecutor:
    """Executes one GE ``GraphDef``. Construction validates the graph; :meth:`run`
    takes the inputs in ``Data`` index order and returns the ``NetOutput`` values."""

    def __init__(self, graph) -> None:
        self.graph = graph
        self.name = graph.name
        ops = list(graph.op)
        by_name = {}
        for op in ops:
            if op.name in by_name:
                raise GeGraphError(f"graph {self.name}: two nodes are named {op.name}")
            by_name[op.name] = op
        outputs = [op for op in ops if op.type == "NetOutput"]
        if len(outputs) != 1:
            raise GeGraphError(
                f"graph {self.name}: expected one NetOutput node, found {len(outputs)}"
            )
        self._data = self._index_data(ops)
        self._consts: dict[str, torch.Tensor] = {}  # Const node name -> value (on CPU)
        self._const_copies: dict[tuple[str, torch.device], torch.Tensor] = {}
        steps, deps = {}, {}
        for op in ops:
            try:
                steps[op.name], deps[op.name] = self._bind(op, by_name)
            except (GeGraphError, GeExecutionError) as err:
                raise GeGraphError(
                    f"graph {self.name}: node {op.name} ({op.type}): {err}"
                ) from None
        self._steps = [steps[name] for name in self._order(ops, deps)]
        self._output = steps[outputs[0].name]
        self._at_compile = self._inferred_at_compile()

    def _inferred_at_compile(self) -> dict[tuple[str, int], AtCompile]:
        """Each node output as GE infers it before the nodes using it, in graph order: a
        Data's declared shape, a Const's value, a shape-preserving op's input's shape
        (its own descriptor left empty), else the descriptor TorchAir gave it."""
        found = {}
        for step in self._steps:
            op = step.node.op
            if op.type == "Const":
                value = self._consts[op.name]
                found[(op.name, 0)] = AtCompile(tuple(value.shape), value)
                continue
            for i, desc in enumerate(op.output_desc):
                shape = tuple(desc.shape.dim)
                first = step.inputs[0] if step.inputs else None
                if op.type in _SAME_SHAPE and not shape and first in found:
                    shape = found[first].shape
                found[(op.name, i)] = AtCompile(shape)
        return found

    def _index_data(self, ops):
        data = {}
        for op in ops:
            if op.type not in ("Data", "RefData"):
                continue
            index = op.attr["index"].i if "index" in op.attr else -1
            if index in data or index < 0:
                raise GeGraphError(
                    f"graph {self.name}: Data node {op.name} has a bad or repeated index {index}"
                )
            data[index] = op
        if sorted(data) != list(range(len(data))):
            raise GeGraphError(
                f"graph {self.name}: Data indices {sorted(data)} are not 0..{len(data) - 1}"
            )
        return [data[i] for i in range(len(data))]

    def _bind(self, op, by_name):
        inputs, deps = [], set()
        for ref in op.input:
            edge = _parse_edge(ref, op.name)
            if edge is None:
                inputs.append(None)
                continue
            producer, index = edge
            if producer not in by_name:
                raise GeGraphError(f"input {ref!r} refers to no node")
            deps.add(producer)
            if index == -1:
                continue  # control edge: ordering only
            produced = _output_count(by_name[producer])
            if not 0 <= index < produced:
                raise GeGraphError(f"input {ref!r}: {producer} has {produced} outputs")
            inputs.append((producer, index))
        if op.type == "Const":
            if "value" not in op.attr:
                raise GeGraphError("Const without a value")
            self._consts[op.name] = decode_const(op.attr["value"].t)
            return _Step(Node(op), inputs, None), deps
        if op.type in GRAPH_OPS:
            return _Step(Node(op), inputs, None), deps
        # A package's own op wins over a built-in of the same type, as its installed CANN
        # package does on a host; a prototype alone (an audit's --ir) names no torch op.
        ir = irdef.lookup(op.type)
        if ir is not None and ir.torch_op:
            return _Step(Node(op), inputs, _CustomOp(op, ir, len(inputs))), deps
        kernel = kernels.lookup(op.type)
        if kernel is None:
            if ir is None:
                raise GeGraphError(
                    f"GE op type {op.type} is unknown: neither a built-in op of the reference "
                    "executor nor a custom op registered in opsdk.irdef"
                )
            kernel = _CustomOp(op, ir, len(inputs))
        return _Step(Node(op), inputs, kernel), deps

    def _order(self, ops, deps):
        """Topological order over data and control edges, stable in graph order."""
        position = {op.name: i for i, op in enumerate(ops)}
        users = {op.name: [] for op in ops}
        pending = {}
        for name, producers in deps.items():
            pending[name] = len(producers)
            for p in producers:
                users[p].append(name)
        ready = [position[n] for n, count in pending.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            name = ops[heapq.heappop(ready)].name
            order.append(name)
            for user in users[name]:
                pending[user] -= 1
                if pending[user] == 0:
                    heapq.heappush(ready, position[user])
        if len(order) != len(ops):
            stuck = sorted(set(pending) - set(order))
            raise GeGraphError(f"graph {self.name}: cycle through nodes {stuck}")
        return order

    def run(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Run on the device of the graph's device inputs (CPU if there are none): host
        inputs and constants are moved there, as GE copies host data to the device."""
        given, inputs = inputs, self._check_inputs(inputs)
        device = next((t.device for t in inputs if t.device.type != "cpu"), torch.device("cpu"))
        inputs = [t.to(device) for t in inputs]
        values: dict[tuple[str, int], torch.Tensor] = {}
        # GE runs natively: no Python dispatch mode around the graph's caller (AOT
        # Autograd's first-call aliasing check, a user's mode) sees the ops it executes.
        with torch.no_grad(), _disable_current_modes():
            for step in self._steps:
                node = step.node
                if node.type == "NetOutput":
                    continue
                args = [values[edge] if edge is not None else None for edge in step.inputs]
                try:
                    outputs = self._run_step(step, args, inputs, device)
                except (GeGraphError, GeExecutionError) as err:
                    raise GeExecutionError(
                        f"graph {self.name}: node {node.name} ({node.type}) failed: {err}"
                    ) from None
                except Exception as err:
                    raise GeExecutionError(
                        f"graph {self.name}: node {node.name} ({node.type}) failed: "
                        f"{type(err).__name__}: {err}"
                    ) from err
                for i, value in enumerate(outputs):
                    values[(node.name, i)] = value
            results = [values[edge] for edge in self._output.inputs if edge is not None]
            return self._fresh(results, given)

    def _run_step(self, step, args, inputs, device):
        node = step.node
        if node.type in ("Data", "RefData"):
            return [inputs[node.op.attr["index"].i]]
        if node.type == "Const":
            return [self._const_on(node.name, device)]
        outputs = step.run(node, args)
        if len(outputs) != node.num_outputs:
            raise GeExecutionError(
                f"produced {len(outputs)} outputs, the node declares {node.num_outputs}"
            )
        if isinstance(step.run, _CustomOp):
            at_compile = [self._at_compile.get(edge) if edge else None for edge in step.inputs]
            observe.notify(node.op, args, outputs, at_compile)
        return outputs

    def _const_on(self, name: str, device: torch.device) -> torch.Tensor:
        value = self._consts[name]
        if device.type == "cpu":
            return value
        key = (name, device)
        if key not in self._const_copies:
            self._const_copies[key] = value.to(device)
        return self._const_copies[key]

    def _fresh(self, results, inputs):
        """GE hands back outputs in their own contiguous memory, never a graph input's
        or a constant's."""
        kept = [*self._consts.values(), *self._const_copies.values(), *inputs]
        owned = {t.untyped_storage().data_ptr() for t in kept if t.numel()}
        fresh = []
        for t in results:
            t = t.contiguous()
            if t.numel() and t.untyped_storage().data_ptr() in owned:
                t = t.clone()
            fresh.append(t)
        return fresh

    def _check_inputs(self, inputs) -> list:
        """Inputs as the Data nodes declare them. TorchAir passes a SymInt as a
        one-element int64 tensor of shape [1] for a scalar (shape []) Data node, which
        GE takes as that scalar; any other disagreement is an error."""
        if len(inputs) != len(self._data):
            raise GeExecutionError(
                f"graph {self.name}: {len(inputs)} inputs for {len(self._data)} Data nodes"
            )
        checked = []
        for index, (op, tensor) in enumerate(zip(self._data, inputs, strict=True)):
            desc = op.output_desc[0] if op.output_desc else None
            if desc is None:
                checked.append(tensor)
                continue
            dims = list(desc.shape.dim)
            want = torch_dtype_from_proto(desc) if desc.dtype else None
            if dims == [] and tensor.dim() == 1 and tensor.numel() == 1:
                tensor = tensor.reshape(())
            shape_ok = dims == [-2] or (
                len(dims) == tensor.dim()
                and all(d in (-1, s) for d, s in zip(dims, tensor.shape, strict=True))
            )
            if (want is not None and tensor.dtype != want) or not shape_ok:
                raise GeExecutionError(
                    f"graph {self.name}: input {index} ({op.name}) is "
                    f"{tensor.dtype}{list(tensor.shape)}, the Data node expects {want}{dims}"
                )
            checked.append(tensor)
        return checked


def _output_count(op) -> int:
    if op.type in ("Data", "RefData", "Const"):
        return 1
    return len(op.output_desc)
