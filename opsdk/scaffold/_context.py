"""What the `opsdk new` templates read: data about the op, derived once from its spec.

Only data lives here (names, kinds, type spellings, flags); the code the data
becomes is in the templates and their macros (``templates/templates/macros.jinja``).
"""

from __future__ import annotations

import torch

import opsdk
from opsdk import cann as cann_model
from opsdk._runtime import spec, types, updatable
from opsdk._runtime.converters import (
    attr_builder,
    bind,
    ge_attr_args,
    ge_input_args,
    ir_def_for,
)
from opsdk._runtime.inputs import SPEC_NAMES, default_support
from opsdk._runtime.patterns import keyword_scalars
from opsdk.cann import aclnn, cppsig
from opsdk.cann import specs as cann_specs
from opsdk.errors import SpecError
from opsdk.scaffold import meta_fit, pysig
from opsdk.scaffold.cann_torch import TorchSide


def context(
    op: spec.OpSchema, req, package: str | None = None, cann: TorchSide | None = None
) -> dict:
    """Everything the templates read, for the request ``req`` (a ``NewRequest``).
    ``package`` is the op library an added op (``--into``) goes into: the op's modules
    are then its subpackage. A pair's ``op`` is its in-place op; ``pair`` describes
    the functional one. ``cann``: the op comes from a CANN definition
    (``--from-cann``), whose IR and specs it gives."""
    partner = spec.inplace_pair(op)[1] if req.pair else None
    name = req.package or (partner.name if partner else op.name)
    module = f"{package}.{name}" if package else name
    return {
        "project_dir": name,
        "package": name,
        "module": module,
        "dist_name": name.strip("_").replace("_", "-"),
        "style": req.style,
        "autograd": req.autograd,
        "pattern": req.pattern,
        "ge": "ge" in req.modes,  # a converter and an IR (opsdk new --modes)
        "modes": list(req.modes),
        "keyword_scalars": keyword_scalars(op),
        "attach": req.attach,
        "opsdk_version": opsdk.__version__,
        "spec_names": sorted(SPEC_NAMES.values()),  # the constructors specs.py may import
        "op": _op(op, cann, req.attach, working=op.is_default_add and req.writes_the_add),
        "pair": _op(partner) if partner else {},
        "cpp": _cpp_context(op, module, cann) if req.style == "cpp" else {},
        "updatable": _updatable(op, req.updatable) if req.updatable else {},
    }


def _updatable(op: spec.OpSchema, params: tuple[str, ...]) -> dict:
    """What updatable.py reads: the ``.out`` overload and workspace getter opsdk defines
    for TorchAir's update table, and the Python call of the op from their arguments."""
    positional = [a.name for a in op.args if not a.kwarg_only]
    keyword = [a.name for a in op.args if a.kwarg_only]
    return {
        "params": list(params),
        "out_schema": updatable.out_schema(op),
        "workspace_schema": updatable.workspace_schema(op),
        "workspace_name": updatable.workspace_name(op),
        "workspace": None,  # bytes the op's own tiling asks (--from-cann), else the default
        # "*" only before keyword arguments: ``def f(x, k, *)`` is no Python
        "signature": ", ".join([*positional, *(["*", *keyword] if keyword else [])]),
        "call": ", ".join([*positional, *(f"{k}={k}" for k in keyword)]),
    }


def _op(
    op: spec.OpSchema, cann: TorchSide | None = None, attach: bool = False, working: bool = False
) -> dict:
    ir = ir_def_for(op) if cann is None else _bound(cann.ir, op)
    written = {ir.ir_name(a.name) for a in op.mutated_args}
    returns_input = spec.returns_its_first_argument(op)
    return {
        "namespace": op.namespace,
        "name": op.name,
        "qualname": op.qualname,
        "overload": op.overload,
        "impl_name": f"{op.name}.{op.overload}" if op.overload else op.name,
        "overload_attr": op.overload_attr,
        "schema": op.schema,
        "schema_args": op.schema_args,
        "ir_name": ir.op_type,
        "ir_const": op.name.upper() + "_IR",
        "inplace": op.inplace,
        "mutates": [a.name for a in op.mutated_args],
        # torch_npu's in-place convention: the op returns the input it writes
        "returns_input": op.args[0].name if returns_input else None,
        "working": working,
        "from_cann": cann is not None,
        "specs": list(cann_specs.cases(op, ir, cann.op, cann.accepts, cann.tested))
        if cann is not None
        else None,
        # opsdk writes specs.py when it knows cases: its own add, CANN's dtypes, or (an
        # attached op, which has no scaffold to start from) the schema's default case
        "has_specs": working or cann is not None or attach,
        "arg_names": dict(ir.arg_names),
        # the definition's dtypes, kept in ir.py so its exports need no reference: rows,
        # or a REG_OP's per-tensor sets as it writes them
        "ir_dtypes": {n: v for n, v in cann.op.dtypes.items() if v} if cann is not None else {},
        "ir_dtype_sets": cann is not None and not cann.op.rows,
        "ir_formats": _formats(cann.op) if cann is not None else {},
        "ir_chips": list(cann.op.chips) if cann is not None else [],
        # the folder the op's copied C++ inference goes to (render sets it when there is one)
        "infer_dir": None,
        "args": [_arg(a) for a in op.args],
        "returns": [pysig.py_type(r.type) for r in op.returns],
        "grads": [f"grad_{name}" for name in _return_names(op)],
        "ge_inputs": [
            {"name": a.name, "ir": ir.ir_name(a.name), "host": _host_input(a, cann)}
            for a in ge_input_args(op)
        ],
        "ge_attrs": [
            {
                "name": a.name,
                "ir": ir.ir_name(a.name),
                # a ScalarType standing for an Int attr holding a dtype: GE's number
                "builder": "Int" if _int_attr(ir, a) else attr_builder(a),
                "convert": types.row(a.type).ge_value,
                "optional": a.is_optional,
            }
            for a in ge_attr_args(op)
        ],
        # IR attrs that count a dynamic input: set from its length (opsdk.cann.counts)
        "counted": [
            {"ir": n, "of": next(a.name for a in op.args if ir.ir_name(a.name) == i)}
            for n, i in cann_model.counts(ir).items()
            if n not in {ir.ir_name(a.name) for a in op.args}
        ],
        "host_inputs": sorted({_host_input(a, cann) for a in op.args if a.is_symbolic}),
        "ge_values": sorted({types.row(a.type).ge_value for a in ge_attr_args(op)} - {None}),
        "ir_inputs": [
            {"name": i.name, "kind": i.kind, "value_depend": i.value_depend, "scalar": i.scalar}
            for i in ir.inputs
        ],
        "ir_outputs": [
            {
                "name": o.name,
                "kind": o.kind,
                "mutated": o.name in written,
                "depends_on_compute": o.depends_on_compute,
            }
            for o in ir.outputs
        ],
        "ir_attrs": [
            {
                "name": a.name,
                # spelled as the converter's builder (attr.Float), one word for one type
                "type": types.BY_VALUE_TYPE[a.type].ge_attr,
                "default": _default_repr(a.default),
                "dtype": a.dtype,
            }
            for a in ir.attrs
        ],
        "support": repr(default_support(op)),
        # the opsdk.meta helper the fake likely needs, as comment lines: a guess
        "meta_fit": meta_fit.suggest(op),
        "test_args": _test_args(op),
    }


def _test_args(op: spec.OpSchema) -> list[dict]:
    """The arguments of the first test's call: the default case ``opsdk check`` runs without
    specs (:func:`opsdk._runtime.inputs.default_support`): a tensor (optional ones too) as the
    Python that makes it, another argument with a default left to it; by keyword after one
    left out."""
    case = default_support(op)
    values = [*case.args, *case.kwargs.values()]  # schema order: keyword-only ones come last
    args, keyword = [], False
    for arg, value in zip(op.args, values, strict=True):
        if arg.has_default and not arg.is_tensor:
            keyword = True
            continue
        keyword = keyword or arg.kwarg_only
        tensors = value if arg.is_list and arg.is_tensor else [value] if arg.is_tensor else []
        make = [f"torch.randn({', '.join(map(str, t.dims))})" for t in tensors]
        args.append(
            {
                "name": arg.name,
                "make": (f"[{', '.join(make)}]" if arg.is_list else make[0]) if make else None,
                "list": arg.is_list,
                "value": None if make else _value_repr(value),
                "keyword": keyword,
            }
        )
    return args


def _value_repr(value) -> str:
    """Python source of a default case's scalar (a dtype as ``torch.float32``)."""
    return str(value) if isinstance(value, torch.dtype) else repr(value)


def _int_attr(ir, arg: spec.Arg) -> bool:
    """Whether the IR attr of ``arg`` is an Int while ``arg`` is a ScalarType (a CANN Int
    attr holding a data type, :attr:`opsdk.irdef.Attr.dtype`)."""
    attr = next((x for x in ir.attrs if x.name == ir.ir_name(arg.name)), None)
    return attr is not None and attr.type == "VT_INT" and types.base(arg.type) == "ScalarType"


def _formats(op) -> dict:
    """The definition's formats where they say more than ND (aligned with its rows)."""
    if not op.rows or all(f == "ND" for fs in op.formats.values() for f in fs):
        return {}
    return {n: fs for n, fs in op.formats.items() if op.dtypes.get(n)}


def _bound(ir, op: spec.OpSchema):
    """CANN's IR tied to the torch op (names mapped where the schemas differ)."""
    try:
        return bind(ir, op, arg_names=dict(ir.arg_names))
    except ValueError as err:
        raise SpecError(f"--from-cann: {err}") from None


def _arg(arg: spec.Arg) -> dict:
    return {
        "name": arg.name,
        "py_type": pysig.py_type(arg.type),
        "default": pysig.default(arg) if arg.has_default else None,
        "kwarg_only": arg.kwarg_only,
        "tensor": arg.is_tensor,
        "list": arg.is_list,
        "optional": arg.is_optional,
        "host": arg.is_symbolic,
    }


def _return_names(op: spec.OpSchema) -> list[str]:
    several = len(op.returns) > 1
    return [r.name or (f"out{i}" if several else "out") for i, r in enumerate(op.returns)]


def _cpp_context(op: spec.OpSchema, module: str, cann: TorchSide | None) -> dict:
    """What the C++ op library template reads: the kernels' parameter types and where the
    source is (its skeleton messages name it by path: C++ knows no ``__file__``); for a CANN
    op, its aclnn call."""
    return {
        "aclnn": aclnn.call(op, _bound(cann.ir, op), cann.op.dtypes, _return_names(op))
        if cann is not None
        else None,
        "file": f"{module.replace('.', '/')}/{op.name}.cpp",
        "returns": cppsig.return_type(op),
        "args": [{"name": cppsig.param_name(a.name), "type": cppsig.arg_type(a)} for a in op.args],
        "outputs": _return_names(op),
        "entry": cppsig.has_fast_entry(op),
    }


def _host_input(arg: spec.Arg, cann: TorchSide | None) -> str | None:
    """The opsdk.converters helper that makes a SymInt or Scalar argument a GE input: int64,
    or int32 where the CANN definition declares the input int32 but never int64."""
    if not arg.is_symbolic:
        return None
    if not arg.type.startswith("SymInt"):
        return "scalar_input"
    declared = set(cann.op.dtypes.get(cann.ir.ir_name(arg.name), ())) if cann else set()
    return "int32_input" if "DT_INT32" in declared and "DT_INT64" not in declared else "int64_input"


def _default_repr(value) -> str | None:
    """Python source of an IR attr default (None: the attr is required)."""
    return None if value is None else repr(value)
