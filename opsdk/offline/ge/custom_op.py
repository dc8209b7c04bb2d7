"""A custom op node bound to the torch op its ``IrDef`` names, run through that op's CPU kernel."""

from __future__ import annotations

import torch

from opsdk._runtime import irdef, types
from opsdk._runtime import spec as op_spec
from opsdk.errors import SpecError
from opsdk.offline.ge.errors import GeExecutionError, GeGraphError
from opsdk.offline.ge.kernels import Node
from opsdk.offline.ge.proto import torch_dtype_from_ge


def _resolve_torch_op(ir: irdef.IrDef):
    if not ir.torch_op:
        raise GeGraphError(
            f"IrDef {ir.op_type} names no torch_op, so the reference executor cannot run it"
        )
    try:
        return op_spec.resolve(ir.torch_op)
    except SpecError as err:
        raise GeGraphError(f"IrDef {ir.op_type}: {err}") from None


def _check_attr_type(ir: irdef.IrDef, name: str, attr) -> None:
    """GE refuses a node whose attr is set with another type than the IR declares."""
    declared = next(a.type for a in ir.attrs if a.name == name)
    got = attr.WhichOneof("value")
    row = types.BY_VALUE_TYPE[declared]
    if got != row.attr_field:
        raise GeGraphError(
            f"attr {name!r} of {ir.op_type} is declared {row.ge_attr} ({declared}) in the IR "
            f"but set as {got!r}; set it with attr.{row.ge_attr} in the converter"
        )


class _CustomOp:
    """Runs a custom op node through its torch op's CPU kernel.

    IR inputs and attrs are bound to the torch op's arguments through the IR's
    ``arg_names`` (same names unless mapped); IR outputs are, in IR order, the
    mutated argument of the same IR name (a GE ref output, written into the node's
    input) or else the op's next new return value.
    """

    def __init__(self, op, ir: irdef.IrDef, data_inputs: int):
        self.ir = ir
        self.torch_op = _resolve_torch_op(ir)
        names = [d.name for d in op.input_desc]
        if len(names) != data_inputs:
            raise GeGraphError(f"{data_inputs} inputs but {len(names)} input descriptions")
        # IR input name -> its input position (a dynamic input's: a list; absent: None)
        self.inputs: dict[str, int | list[int] | None] = {}
        for spec in ir.inputs:
            if spec.kind == "dynamic":
                positions: list[int] = []
                while f"{spec.name}{len(positions)}" in names:
                    positions.append(names.index(f"{spec.name}{len(positions)}"))
                self.inputs[spec.name] = positions
            elif spec.name in names:
                self.inputs[spec.name] = names.index(spec.name)
            elif spec.kind == "required":
                raise GeGraphError(f"required input {spec.name!r} of {ir.op_type} is missing")
            else:
                self.inputs[spec.name] = None
        bound = set()
        for where in self.inputs.values():
            bound.update(where if isinstance(where, list) else [] if where is None else [where])
        extra = [n for i, n in enumerate(names) if i not in bound]
        if extra:
            raise GeGraphError(f"inputs {extra} are not in the IR definition of {ir.op_type}")
        # Attrs outside the IR are kept, not refused: GE carries extra node attrs
        # (TorchAir's scope and nn_module_stack attrs) on any op.
        self._bind_schema(op)
        self._bind_outputs(op)

    def _bind_schema(self, op):
        ir = self.ir
        self.spec = op_spec.of(self.torch_op)
        by_ir_name = {ir.ir_name(a.name): a for a in self.spec.args}
        for name in self.inputs:
            if name not in by_ir_name:
                raise GeGraphError(
                    f"IR input {name!r} of {ir.op_type} is not an argument of {ir.torch_op}: "
                    f"map the torch argument to it in the IrDef, arg_names={{'self': {name!r}}}"
                )
        attr_defaults = {a.name: a.default for a in ir.attrs}
        fixed = dict(ir.fixed_args)
        self.args = []  # (torch arg name, kind, IR name or value)
        for arg in self.spec.args:
            name = ir.ir_name(arg.name)
            if name in self.inputs:
                self.args.append((arg.name, "input", name))
            elif name in attr_defaults and name in op.attr:
                _check_attr_type(ir, name, op.attr[name])
                self.args.append((arg.name, "attr", name))
            elif name in attr_defaults and arg.is_optional:
                self.args.append((arg.name, "value", None))  # GE has no None: unset means None
            elif name in attr_defaults and attr_defaults[name] is not None:
                self.args.append((arg.name, "value", attr_defaults[name]))  # CANN's default
            elif arg.name in fixed:
                self.args.append((arg.name, "value", fixed[arg.name]))
            elif name in attr_defaults and not arg.has_default:
                raise GeGraphError(f"attr {name!r} (no default in {ir.torch_op}) is not set")
            elif not arg.has_default:
                raise GeGraphError(
                    f"argument {arg.name!r} of {ir.torch_op} is neither an IR input nor an IR "
                    f"attr of {ir.op_type}: map it (arg_names) or fix its value (fixed_args)"
                )
        self.mutated = {a.name for a in self.spec.mutated_args}
        # A ScalarType argument bound to an Int attr (a CANN Int holding a data type,
        # irdef.Attr.dtype) arrives as GE's number, which is not torch's ScalarType code.
        ints = {a.name for a in ir.attrs if a.type == "VT_INT"}
        self.ge_dtypes = {
            a.name
            for a in self.spec.args
            if types.base(a.type) == "ScalarType" and ir.ir_name(a.name) in ints
        }
        # SymInt inputs arrive as int64 tensors: name -> whether it is a SymInt[] (else one).
        self.ints = {
            a.name: types.base(a.type).endswith("[]") for a in self.spec.args if not a.is_tensor
        }

    def _bind_outputs(self, op):
        names = [d.name for d in op.output_desc]
        written = {self.ir.ir_name(m): m for m in self.mutated}
        self.outputs = []  # ("mutated", arg name) | ("return", index, dynamic count or None)
        expected = []
        returns = 0
        for spec in self.ir.outputs:
            if spec.name in written:
                self.outputs.append(("mutated", written[spec.name]))
                expected.append(spec.name)
                continue
            count = None
            if spec.kind == "dynamic":
                count = 0
                while f"{spec.name}{count}" in names:
                    count += 1
                expected.extend(f"{spec.name}{i}" for i in range(count))
            else:
                expected.append(spec.name)
            self.outputs.append(("return", returns, count))
            returns += 1
        n_returns = len(self.spec.fresh_returns)
        if returns != n_returns:
            raise GeGraphError(
                f"{self.ir.op_type} declares {returns} outputs besides in-place ones, "
                f"{self.ir.torch_op} returns {n_returns} new tensors"
            )
        if names != expected:
            raise GeGraphError(f"outputs {names} do not match the IR definition's {expected}")

    def __call__(self, node: Node, args: list) -> list:
        kwargs = {}
        written_back: dict[str, torch.Tensor] = {}
        for name, kind, what in self.args:
            if kind == "attr":
                kwargs[name] = node.attr(what)
                if name in self.ge_dtypes:
                    kwargs[name] = torch_dtype_from_ge(kwargs[name])
                continue
            if kind == "value":
                kwargs[name] = what
                continue
            where = self.inputs[what]
            if where is None:
                kwargs[name] = None
            elif isinstance(where, list):
                kwargs[name] = [_on_cpu(args[i]) for i in where]
            elif name in self.ints:
                values = args[where].reshape(-1).tolist()
                kwargs[name] = values if self.ints[name] else values[0]
            else:
                kwargs[name] = _on_cpu(args[where])
                if name in self.mutated and kwargs[name] is not args[where]:
                    written_back[name] = args[where]
        result = self.torch_op(**kwargs)
        for name, target in written_back.items():
            target.copy_(kwargs[name])
        # One return comes back bare (a tensor, or a list for Tensor[]); several as a tuple.
        every = list(result) if len(self.spec.returns) > 1 else [result][: len(self.spec.returns)]
        returns = [v for v, r in zip(every, self.spec.returns, strict=True) if not r.aliased]
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
        outputs = []
        for entry in self.outputs:
            if entry[0] == "mutated":
                name = entry[1]
                outputs.append(written_back.get(name, kwargs[name]))
                continue
            value = returns[entry[1]]
            values = list(value) if entry[2] is not None else [value]
            if entry[2] is not None and len(values) != entry[2]:
                raise GeExecutionError(f"returned {len(values)} tensors for {entry[2]} outputs")
            outputs.extend(v.to(device) for v in values)
        return outputs


def _on_cpu(t):
    """Custom ops run their CPU reference kernel whatever device the graph runs on."""
    return t.cpu() if isinstance(t, torch.Tensor) else t
