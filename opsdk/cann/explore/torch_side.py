"""A case of an op's CANN input space on the torch side: its fake function asked on it,
and the case written as the ``Support(...)`` line a user pastes into ``specs.py``.

The IR's inputs and attrs are bound to the torch op's arguments by name
(``IrDef.arg_names``, else the same name); a torch argument no IR input or attr names
keeps its default (or the value ``IrDef.fixed_args`` gives it).
"""

from __future__ import annotations

import inspect
import logging
import math
from pathlib import Path

import torch

from opsdk._runtime import spec, types
from opsdk._runtime.inputs import SPEC_NAMES
from opsdk._runtime.irdef import IrDef
from opsdk.cann.explore.cases import Case, Tensor
from opsdk.cann.explore.judge import Unsupported
from opsdk.errors import SpecError

__all__ = ["TorchOp", "Unbound", "behind_torch", "fake_location"]


class Unbound(SpecError):
    """A torch argument without a default that no IR input or attr binds: who can bind it
    differs (an opsdk package's ``IrDef.arg_names``; nobody, for a library's converter),
    so the caller says the fix."""


class TorchOp:
    """``op`` (a torch op overload) seen through ``ir``: ``fake(case)`` its fake function's
    outputs as ``(shape, GE dtype)`` pairs, ``support(case)`` the case as a Support line."""

    def __init__(self, op, ir: IrDef, device: str = "cpu"):
        self.op, self.ir, self.device = op, ir, device
        self.spec = spec.of(op)
        inputs, attrs = ir.ir_input_names, ir.ir_attr_names
        fixed = dict(ir.fixed_args)
        self.bound: list[tuple[spec.Arg, str, int]] = []  # (arg, "input"/"attr"/"fixed", index)
        for arg in self.spec.args:
            name = ir.ir_name(arg.name)
            if name in inputs:
                if arg.is_tensor and ir.inputs[inputs.index(name)].value_depend:
                    raise SpecError(
                        f"its C++ reads the data of {name}, which the fake gets as a tensor "
                        "it cannot read"
                    )
                self.bound.append((arg, "input", inputs.index(name)))
            elif arg.name in fixed:  # the value this op type stands for, over an attr
                self.bound.append((arg, "fixed", 0))
            elif name in attrs and not arg.is_tensor:
                self.bound.append((arg, "attr", attrs.index(name)))
            elif not arg.has_default:
                raise Unbound(
                    f"{self.spec.qualname}: argument {arg.name} is no input or attr of {ir.op_type}"
                )
        self.inputs = {inputs[i] for _, what, i in self.bound if what == "input"}
        named = self.inputs | {attrs[i] for _, what, i in self.bound if what == "attr"}
        # what no argument binds stays as the definition has it (see opsdk.cann.explore.cases)
        self.pinned = frozenset(set(inputs) | set(attrs)) - named
        mutated = {ir.ir_name(a.name) for a in self.spec.mutated_args}
        self.written = [o.name in mutated for o in ir.outputs]

    def _values(self, case: Case) -> list[tuple[spec.Arg, object]]:
        """Each bound argument's value in ``case`` (tensors as (dtype, shape, data))."""
        values = []
        for arg, what, index in self.bound:
            if what == "fixed":
                values.append((arg, dict(self.ir.fixed_args)[arg.name]))
            elif what == "attr":
                values.append((arg, _attr(self.ir.attrs[index], case.attrs[index])))
            else:
                instances = case.inputs[index]
                if not arg.is_tensor:  # a value-depend input the op takes as host ints
                    first = instances[0].data if instances else None
                    data = list(first) if first is not None else None
                    values.append((arg, data if arg.is_list or data is None else data[0]))
                elif arg.is_list:
                    values.append((arg, list(instances)))
                else:
                    values.append((arg, instances[0] if instances else None))
        return values

    def fake(self, case: Case) -> list[tuple[tuple[int, ...], str]]:
        """The fake function's outputs on fake tensors of ``case``; raises what it raises,
        :class:`Unsupported` for a dtype torch has not."""
        return self._call(case, None)[0]

    def traced(self, case: Case) -> tuple[list[tuple[tuple[int, ...], str]], Case]:
        """The fake's outputs on ``case`` with symbolic sizes (a symbolic dim -1), as
        Dynamo's dynamic tracing makes them (under a ShapeEnv: sizes 0 and 1 stay fixed,
        equal sizes share a symbol), and ``case`` as GE compiles it: -1 at each input dim
        still symbolic after the call (a dim the fake guarded on is specialized)."""
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        said, made = self._call(case, ShapeEnv())
        inputs = list(case.inputs)
        for arg, what, index in self.bound:
            if what == "input" and arg.is_tensor and inputs[index]:
                tensors = made[arg.name] if arg.is_list else [made[arg.name]]
                inputs[index] = tuple(
                    Tensor(t.dtype, _described(f)[0], t.data)
                    for t, f in zip(inputs[index], tensors, strict=True)
                )
        return said, Case(tuple(inputs), case.attrs)

    def _call(self, case: Case, shape_env) -> tuple[list, dict]:
        """The fake's outputs on ``case`` and the fake tensors it got (by argument name);
        with ``shape_env`` their sizes are symbolic."""
        from torch._subclasses.fake_tensor import FakeTensorMode

        values = self._values(case)
        quiet = logging.getLogger("torch._subclasses.fake_tensor")
        level, quiet.level = quiet.level, logging.CRITICAL
        try:
            with FakeTensorMode(shape_env=shape_env):
                made = {a.name: _made(v, self.device, shape_env) for a, v in values}
                args = [made[a.name] for a, _ in values if not a.kwarg_only]
                kwargs = {a.name: made[a.name] for a, _ in values if a.kwarg_only}
                out = self.op(*args, **kwargs)
        finally:
            quiet.level = level
        returned = iter(out if isinstance(out, (tuple, list)) else [out])
        mutated = iter(made[a.name] for a in self.spec.mutated_args)
        tensors = [next(mutated if w else returned, None) for w in self.written]
        return [_described(t) for t in tensors if t is not None], made

    def support(self, case: Case) -> str:
        """``case`` as a ``Support(...)`` line: tensors and values positional while the
        schema lets them be, attrs at their default left out (the rest by keyword then)."""
        parts, keyword = [], False
        for arg, value in self._values(case):
            if arg.has_default and _same(value, arg.default):
                keyword = True
                continue
            keyword = keyword or arg.kwarg_only
            text = _text(value)
            parts.append(f"{arg.name}={text}" if keyword else text)
        return f"Support({', '.join(parts)})"


def fake_location(qualname: str) -> str:
    """``file:line`` of the op's fake function (through ``register_fake``'s wrapper), ""
    when torch knows none."""
    from torch._library import simple_registry

    kernel = simple_registry.singleton.find(qualname).fake_impl.kernel
    fn = behind_torch(getattr(kernel, "func", kernel)) if kernel else None
    if fn is None or _in_torch(fn):
        return ""
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"


def behind_torch(fn):
    """The function torch's own wrappers close over (``register_fake`` wraps a fake
    function in ``_check_pystubs_once``'s ``inner``), unwrapped; as far as it goes."""
    fn = inspect.unwrap(fn)
    while _in_torch(fn):
        inner = [v for v in map(_contents, fn.__closure__ or ()) if inspect.isfunction(v)]
        if len(inner) != 1:
            return fn
        fn = inspect.unwrap(inner[0])
    return fn


def _in_torch(fn) -> bool:
    code = getattr(fn, "__code__", None)
    return code is not None and Path(code.co_filename).is_relative_to(Path(torch.__file__).parent)


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _torch_dtype(ge: str) -> torch.dtype:
    name = types.DTYPES[ge].torch
    if name is None:
        raise Unsupported(f"torch has no dtype for {ge}")
    return getattr(torch, name)


def _made(value, device: str, shape_env=None):
    """A fake tensor of a case's tensor (its sizes symbolic with ``shape_env``), or
    ``value``."""
    if isinstance(value, list):
        return [_made(v, device, shape_env) for v in value]
    if isinstance(value, Tensor):
        shape = value.shape if shape_env is None else [_symbol(shape_env, n) for n in value.shape]
        return torch.empty(shape, dtype=_torch_dtype(value.dtype), device=device)
    return value


def _symbol(shape_env, size: int):
    """A symbolic size of hint ``size``, as Dynamo makes a dynamic input's (duck-sized: an
    equal size shares the symbol; 0 and 1 come back as ints)."""
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import DimDynamic

    source = ConstantSource(f"size{size}")  # duck-sized: one symbol a size
    symbol = shape_env.create_symbol(size, source, dynamic_dim=DimDynamic.DUCK)
    return shape_env.create_symintnode(symbol, hint=size)


def _described(tensor) -> tuple[tuple[int, ...], str]:
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    shape = tuple(int(d) if is_concrete_int(d) else -1 for d in tensor.shape)
    row = types.dtype(str(tensor.dtype))
    return shape, row.ge if row else "DT_UNDEFINED"


def _attr(attr, value):
    """An IR attr's value as torch takes it: a dtype's number as a torch dtype, a list."""
    if attr.dtype and isinstance(value, int):
        row = types.BY_GE_VALUE.get(value)
        return _torch_dtype(row.ge) if row else value
    return list(value) if isinstance(value, tuple) else value


def _same(value, default) -> bool:
    """Whether a case's value is the argument's default (a float as float32 holds it)."""
    if isinstance(value, list) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    if isinstance(value, float) and isinstance(default, float):
        return math.isclose(value, default, rel_tol=1e-6)
    return type(value) is type(default) and value == default or value is default


def _text(value) -> str:
    if isinstance(value, list):
        return f"[{', '.join(_text(v) for v in value)}]"
    if isinstance(value, Tensor):
        dtype = _torch_dtype(value.dtype)
        dims = ", ".join(map(str, value.shape))
        if dtype in SPEC_NAMES:
            return f"{SPEC_NAMES[dtype]}({dims})"
        return f"TensorSpec(({dims}{',' if len(value.shape) == 1 else ''}), {dtype})"
    return repr(value)
