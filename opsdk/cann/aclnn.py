"""The aclnn API CANN's build generates for an op, and the cpp kernel's call of it.

An AscendC op project's build (opbuild) writes ``aclnn_<op>.h`` from the op's definition:
``aclnnStatus aclnn<Op>GetWorkspaceSize(<inputs>, <attrs>, <outputs>, uint64_t
*workspaceSize, aclOpExecutor **executor)`` and ``aclnn<Op>(workspace, workspaceSize,
executor, stream)``. Its rules, as opbuild's generator applies them (and its generated headers
show):

- each group in declaration order; names camelCase (``num_rows`` -> ``numRows``);
- a tensor is ``const aclTensor *``, a dynamic one ``const aclTensorList *``, a ``.Scalar()`` /
  ``.ScalarList()`` input ``const aclScalar *`` / ``const aclScalarList *``, a ``ValueDepend``
  input a host array by its data types (all float: ``aclFloatArray``, all bool:
  ``aclBoolArray``, all integers: ``aclIntArray``), and the op then also gets
  ``aclnn<Op>TensorGetWorkspaceSize`` taking it as a tensor;
- an input also named as an output is written in place: ``aclTensor *<name>Ref``, and that
  output is no parameter; every tensor is non-const when an output's shape depends on the
  computation;
- ``...Optional`` for an optional input and for an optional str or list attr; an output is
  ``<name>Out``, or ``out`` when it is the op's only output;
- attrs by :data:`opsdk._runtime.types` (``aclnn`` column); a type without one (ListListInt,
  ListString) gets no API.

op-plugin's ``EXEC_NPU_CMD`` calls it with the kernel's arguments, each converted by its
``ConvertType``; what that cannot make (a float list, a dtype as GE's number, a C string, a
tensor read on the host, a host argument's ints) the kernel makes with ``opsdk/aclnn.h``,
which also proves the call against the declaration at compile time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opsdk._runtime import spec, types
from opsdk._runtime.irdef import IrDef
from opsdk.cann import CannOp, counts, cppsig
from opsdk.errors import SpecError

__all__ = ["Api", "Param", "api", "call", "camel", "file_name", "header"]

# The integer data types a ValueDepend input may take as an aclIntArray.
_INTEGERS = frozenset(f"DT_{u}INT{bits}" for u in ("", "U") for bits in (8, 16, 32, 64))
# A ValueDepend input's host array (and the element type opsdk/aclnn.h reads it as), by the
# data types it accepts.
_HOST_ARRAYS = {
    "const aclFloatArray *": "float",
    "const aclBoolArray *": "bool",
    "const aclIntArray *": "int64_t",
}
# How the kernel makes what aclnn takes of an attr EXEC_NPU_CMD cannot convert as it is (the
# locals opsdk/aclnn.h helps with), by schema type; the other attr types it passes as they are.
_ATTR_LOCALS = {
    "str": "str",
    "ScalarType": "dtype",
    "float[]": "float_array",
    "bool[]": "bool_array",
}


@dataclass(frozen=True)
class Param:
    """One parameter of ``aclnn<Op>GetWorkspaceSize``: its C type and name as opbuild writes
    them, the IR input, attr or output it carries (``role``), and what the header's comment
    says of it (``required``, ``optional``, ``dynamic``). ``ref``: an input written in place,
    and its same-named output, which is only in the comment (the input is the parameter)."""

    type: str
    name: str
    source: str
    role: str
    kind: str
    ref: bool = False

    @property
    def declared(self) -> str:
        return f"{self.type}{self.name}" if self.type.endswith("*") else f"{self.type} {self.name}"


@dataclass(frozen=True)
class Api:
    """The aclnn API of one op: ``documented`` lists inputs, attrs and outputs as the header's
    comment does; ``tensor_inputs`` is set for an op with ValueDepend inputs, whose
    ``...TensorGetWorkspaceSize`` takes them as tensors."""

    op_type: str
    documented: tuple[Param, ...]
    tensor_inputs: tuple[Param, ...] | None = None

    @property
    def name(self) -> str:
        return f"aclnn{self.op_type}"

    @property
    def params(self) -> tuple[Param, ...]:
        """The parameters before ``workspaceSize`` and ``executor``."""
        return tuple(p for p in self.documented if not (p.ref and p.role == "output"))

    def workspace_prototype(self, tensor: bool = False) -> str:
        params = self.params
        if tensor:  # asked only of an op whose tensor_inputs are set
            params = (*(self.tensor_inputs or ()), *(p for p in params if p.role != "input"))
        lines = [f"    {p.declared}," for p in params]
        lines += ["    uint64_t *workspaceSize,", "    aclOpExecutor **executor)"]
        variant = "Tensor" if tensor else ""
        return "\n".join([f"aclnnStatus {self.name}{variant}GetWorkspaceSize(", *lines])

    def launch_prototype(self) -> str:
        return "\n".join(
            [
                f"aclnnStatus {self.name}(",
                "    void *workspace,",
                "    uint64_t workspaceSize,",
                "    aclOpExecutor *executor,",
                "    aclrtStream stream)",
            ]
        )


def camel(name: str) -> str:
    """opbuild's parameter naming: the first letter lowered, each ``_x`` made ``X``."""
    return name[:1].lower() + re.sub(r"_(.?)", lambda m: m.group(1).upper(), name[1:])


def _snake(op_type: str) -> str:
    """opbuild's file naming of an op: ``_`` before a capital that follows a small letter
    (``MatmulW8a8I32Custom`` -> ``matmul_w8a8i32custom``, ``ApplyAdamWQuant`` ->
    ``apply_adam_wquant``)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", op_type).lower()


def file_name(ir: IrDef) -> str:
    return f"aclnn_{_snake(ir.op_type)}.h"


def api(ir: IrDef, dtypes: Mapping[str, Sequence[str]] | None = None) -> Api:
    """The aclnn API opbuild generates for ``ir``. ``dtypes``: the GE data types each input
    accepts (what a ValueDepend input's host array follows). Raises :class:`SpecError` for
    what opbuild generates no API for."""
    outputs = {o.name for o in ir.outputs}
    inputs = set(ir.ir_input_names)
    mutable = any(o.depends_on_compute for o in ir.outputs)
    documented, tensor_inputs = [], []
    for i in ir.inputs:
        ref = i.name in outputs
        name = camel(i.name) + ("Ref" if ref else "") + ("Optional" if i.kind == "optional" else "")
        tensor_type = _tensor_type(i.kind, i.scalar, name, mutable)
        tensor = Param(tensor_type, name, i.name, "input", i.kind, ref)
        tensor_inputs.append(tensor)
        if i.value_depend:
            host = _host_array(ir, i, (dtypes or {}).get(i.name, ()))
            documented.append(Param(host, name, i.name, "input", i.kind, ref))
        else:
            documented.append(tensor)
    documented += [_attr(ir, a) for a in ir.attrs]
    for o in ir.outputs:
        ref = o.name in inputs
        if ref:
            name = camel(o.name) + "Ref"
        else:
            name = "out" if len(ir.outputs) == 1 else camel(o.name) + "Out"
        documented.append(
            Param(_tensor_type(o.kind, None, name, mutable), name, o.name, "output", o.kind, ref)
        )
    value_depend = any(i.value_depend for i in ir.inputs)
    return Api(ir.op_type, tuple(documented), tuple(tensor_inputs) if value_depend else None)


def _tensor_type(kind: str, scalar: str | None, name: str, mutable: bool) -> str:
    """A tensor parameter's type; opbuild tells a ref by its name (``...Ref``)."""
    if scalar is not None:
        return "const aclScalar *" if scalar == "scalar" else "const aclScalarList *"
    ref = name.endswith("Ref")
    if kind == "dynamic":
        return "aclTensorList *" if ref else "const aclTensorList *"
    return "aclTensor *" if ref or mutable else "const aclTensor *"


def _host_array(ir: IrDef, tensor, dtypes: Sequence[str]) -> str:
    where = f"{ir.op_type}: ValueDepend input {tensor.name!r}"
    if tensor.scalar is not None:
        raise SpecError(f"{where} is also a {tensor.scalar}; aclnn takes one or the other")
    if not dtypes:
        raise SpecError(
            f"{where} declares no data types, and its aclnn host array follows them: "
            "declare float, bool or integer types"
        )
    for host, ok in (
        ("const aclFloatArray *", set(dtypes) == {"DT_FLOAT"}),
        ("const aclBoolArray *", set(dtypes) == {"DT_BOOL"}),
        ("const aclIntArray *", set(dtypes) <= _INTEGERS),
    ):
        if ok:
            return host
    raise SpecError(
        f"{where} accepts {', '.join(dtypes)}; aclnn takes a ValueDepend input whose types are "
        "all float, all bool or all integers"
    )


def _attr(ir: IrDef, attr) -> Param:
    row = types.BY_VALUE_TYPE[attr.type]
    if row.aclnn is None:
        takes = ", ".join(r.reg_op for r in types.BY_VALUE_TYPE.values() if r.aclnn and r.reg_op)
        raise SpecError(
            f"{ir.op_type}: attr {attr.name!r} is a {row.reg_op}, for which CANN generates no "
            f"aclnn API (its attrs are {takes})"
        )
    name = camel(attr.name)
    optional = attr.default is not None
    if optional and (row.schema == "str" or row.schema.endswith("[]")):
        name += "Optional"
    return Param(row.aclnn, name, attr.name, "attr", "optional" if optional else "required")


def header(op: IrDef | CannOp) -> str:
    """``aclnn_<op>.h`` as opbuild writes it: the declarations, each with its parameters'
    comment."""
    op = op if isinstance(op, CannOp) else CannOp(op)
    found = api(op.ir, op.dtypes)
    guard = f"ACLNN_{_snake(found.op_type).upper()}_H_"
    executor = [
        ("workspaceSize", "size of workspace (output)"),
        ("executor", "executor context (output)"),
    ]
    declarations = [
        (f"{found.name}GetWorkspaceSize", found.documented, found.workspace_prototype())
    ]
    if found.tensor_inputs is not None:
        tensor = (*found.tensor_inputs, *(p for p in found.documented if p.role != "input"))
        declarations.append(
            (f"{found.name}TensorGetWorkspaceSize", tensor, found.workspace_prototype(tensor=True))
        )
    lines = [
        f"// aclnn API of {found.op_type} as CANN's build generates it, written by "
        "`opsdk ir --format aclnn`.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        '#include "aclnn/acl_meta.h"',
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
    ]
    for function, params, prototype in declarations:
        described = [(p.name, p.kind) for p in params] + executor
        lines += [*_comment(function, described), _VISIBLE, f"{prototype};", ""]
    launch = [
        ("workspace", "workspace memory address (input)"),
        ("workspaceSize", "size of workspace (input)"),
        ("executor", "executor context (input)"),
        ("stream", "acl stream"),
    ]
    lines += [*_comment(found.name, launch), _VISIBLE, f"{found.launch_prototype()};", ""]
    lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif  // {guard}"]
    return "\n".join(lines) + "\n"


_VISIBLE = '__attribute__((visibility("default")))'


def _comment(function: str, described: Sequence[tuple[str, str]]) -> list[str]:
    """The comment opbuild writes above a declaration: each parameter, and what it is."""
    return [f"/* {function}", *(f" * {name} : {text}" for name, text in described), " */"]


def call(op: spec.OpSchema, ir: IrDef, dtypes: Mapping, returns: Sequence[str]) -> dict:
    """What the cpp kernel's CANN branch reads: the API, and per parameter the kernel's value
    passed to ``EXEC_NPU_CMD`` (``passed``), made first where ``local`` says how (see
    ``opsdk/aclnn.h``). ``ir`` is tied to ``op`` (``arg_names``); ``returns`` names the
    kernel's outputs: a written input is passed as its ``...Ref``, the other outputs are the
    op's returns, in order."""
    found = api(ir, dtypes)
    by_ir = {ir.ir_name(a.name): a for a in op.args}
    counted = counts(ir)
    fresh = iter(returns)
    args = []
    for p in found.params:
        if p.role == "output":
            name = next(fresh)
            local = "tensor_list" if p.kind == "dynamic" else None
        elif p.source not in by_ir and p.source in counted:  # the list's length
            name, local = cppsig.param_name(by_ir[counted[p.source]].name), "count"
        else:
            arg = by_ir[p.source]
            name = cppsig.param_name(arg.name)
            local = _local(p, arg)
        args.append(
            {
                "param": p.declared,
                "name": name,
                "local": local,
                "passed": f"{p.source}_acl"
                if local == "count"
                else f"{name}_acl"
                if local
                else name,
                "element": _HOST_ARRAYS.get(p.type),
            }
        )
    device = next((cppsig.param_name(a.name) for a in op.args if a.type == "Tensor"), None)
    return {
        "api": found.name,
        "file": file_name(ir),
        "prototypes": [found.workspace_prototype(), found.launch_prototype()],
        "args": args,
        "written": [
            {"name": cppsig.param_name(by_ir[p.source].name), "param": p.name}
            for p in found.params
            if p.ref
        ],
        "device": f"{device}.device()" if device else "c10::Device(c10::DeviceType::PrivateUse1)",
        "fresh": list(returns) if op.fresh_returns else [],
    }


def _local(param: Param, arg: spec.Arg) -> str | None:
    """How the kernel makes what aclnn takes of ``arg``, None: EXEC_NPU_CMD converts it."""
    if param.role == "input":
        if param.type in _HOST_ARRAYS:  # read on the host: a host argument, or a tensor
            return "host_ints" if types.base(arg.type).startswith("SymInt") else "host_values"
        return {"const aclScalar *": "scalar", "const aclScalarList *": "scalar_list"}.get(
            param.type
        )
    return _ATTR_LOCALS.get(types.base(arg.type))
