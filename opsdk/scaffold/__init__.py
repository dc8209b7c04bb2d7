"""`opsdk new`: render an op package from the cookiecutter template, atomically.

The template (``templates/``) holds the files; this module derives what they
need from the op spec and writes the result so that a failure at any point
leaves nothing behind, and an existing directory is never deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cookiecutter.generate import generate_files

import opsdk
from opsdk.axes import DEFAULT_STYLE, STYLES
from opsdk.errors import ScaffoldError, SpecError
from opsdk.runtime import spec
from opsdk.runtime.converters import (
    attr_builder,
    ge_attr_args,
    ge_input_args,
    ir_def_for,
    is_symint,
)
from opsdk.scaffold import cppsig, pysig

# The cookiecutter template: package data beside this module, in a checkout and installed.
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class NewRequest:
    name: str
    inplace: bool = False
    namespace: str | None = None
    schema: str | None = None
    style: str = DEFAULT_STYLE
    out: Path = Path(".")
    force: bool = False
    autograd: bool = False


@dataclass(frozen=True)
class NewResult:
    path: Path
    backup: Path | None  # where --force moved an existing directory


def build_spec(req: NewRequest) -> spec.OpSpec:
    """Validate the request and parse its schema (the default add when none is given)."""
    spec.check_identifier("op name", req.name)
    if req.style not in STYLES:
        raise SpecError(f"unknown --style {req.style!r}: choose one of {', '.join(STYLES)}")
    text = req.schema or spec.default_schema(req.name, req.inplace)
    op = spec.parse(text, name=req.name, namespace=req.namespace)
    if req.inplace:
        spec.require_inplace(op)
    if req.autograd:
        spec.require_differentiable(op)
    if req.style == "cpp":
        cppsig.signature(op.name, op)  # refuses a type without a C++ kernel type
    return op


def context(
    op: spec.OpSpec, style: str, autograd: bool = False, package: str | None = None
) -> dict:
    """Everything the templates read, derived once from the spec. ``package`` is the op
    library an added op (``--into``) goes into: the op's modules are then its subpackage."""
    ir = ir_def_for(op)
    params = pysig.parameters(op)
    returns = pysig.return_annotation(op)
    impl_name = f"{op.name}.{op.overload}" if op.overload else op.name
    module = f"{package}.{op.name}" if package else op.name
    return {
        "project_dir": op.name,
        "package": op.name,
        "module": module,
        "dist_name": op.name.replace("_", "-"),
        "style": style,
        "autograd": _autograd_context(op) if autograd else {},
        "opsdk_version": opsdk.__version__,
        "op": {
            "namespace": op.namespace,
            "name": op.name,
            "qualname": op.qualname,
            "overload_attr": op.overload_attr,
            "impl_name": impl_name,
            "schema": op.schema,
            "schema_args": op.schema_args,
            "ir_name": op.ir_name,
            "ir_const": _constant_name(op.name),
            "inplace": op.inplace,
            "mutates": [a.name for a in op.mutated_args],
            "working": op.is_default_add,
            "returns_nothing": not op.returns,
            "npu_def": pysig.def_line(f"{op.name}_npu", params, returns),
            "ref_def": pysig.def_line(f"{op.name}_reference", params, returns),
            "fake_def": pysig.def_line(f"{op.name}_fake", params, returns),
            "converter_def": pysig.def_line(
                f"convert_{op.name}", _converter_params(op), _converter_returns(op)
            ),
            "converter_body": _converter_body(op, ir.outputs),
            "ge_attrs": [a.name for a in ge_attr_args(op)],
            "host_inputs": sorted({_host_input(a) for a in op.args if is_symint(a)}),
            "ir_inputs": [{"name": i.name, "kind": i.kind} for i in ir.inputs],
            "ir_outputs": [{"name": o.name, "kind": o.kind} for o in ir.outputs],
            "ir_attrs": [
                {"name": a.name, "type": a.type, "default": _default_repr(a.default)}
                for a in ir.attrs
            ],
            "irdef_imports": _irdef_imports(ir),
        },
        "cpp": _cpp_context(op, module) if style == "cpp" else {},
    }


def _cpp_context(op: spec.OpSpec, module: str) -> dict:
    """What the C++ op library template reads: kernel signatures and skeleton messages
    (which name the source by its path in the project: C++ knows no ``__file__``)."""
    file = f"{module.replace('.', '/')}/{op.name}.cpp"
    several = len(op.returns) > 1
    outputs = [r.name or (f"out{i}" if several else "out") for i, r in enumerate(op.returns)]
    return {
        "npu_sig": cppsig.signature(f"{op.name}_npu", op),
        "ref_sig": cppsig.signature(f"{op.name}_reference", op),
        "aclnn_args": ", ".join([cppsig.param_name(a.name) for a in op.args] + outputs),
        "npu_todo": f"implement me: {op.name}_npu() in {file}: compute the op on npu tensors",
        "ref_todo": f"implement me: {op.name}_reference() in {file}: compute the op on CPU tensors",
        "entry": _entry_context(op) if cppsig.has_fast_entry(op) else {},
    }


def _entry_context(op: spec.OpSpec) -> dict:
    """The fast Python entry point: the op's overload name as the dispatcher knows it
    (``""`` for the default), and its docstring, whose first line is the signature
    ``inspect`` reads."""
    params = ", ".join(["$module", *pysig.parameters(op, annotate=False)])
    return {
        "overload": op.overload,
        "signature": f"{op.name}({params})",
        "summary": f"The fastest way to call {op.qualname} from Python; same semantics as "
        f"torch.ops.{op.namespace}.{op.name}.{op.overload_attr}.",
    }


def _autograd_context(op: spec.OpSpec) -> dict:
    """What the autograd template reads: the backward's gradient parameters (one per
    output) and the plain tensor inputs a skeleton's setup_context saves."""
    several = len(op.returns) > 1
    grads = [
        f"grad_{r.name or (f'out{i}' if several else 'out')}" for i, r in enumerate(op.returns)
    ]
    args = [a.name for a in op.args]
    return {
        "unpack": f"{args[0]}," if len(args) == 1 else ", ".join(args),
        "saved": ", ".join(a.name for a in op.tensor_args if not a.is_list),
        "backward_def": pysig.def_line(f"{op.name}_backward", ["ctx", *grads], "tuple"),
        "grads_for": ", ".join(a.name for a in op.tensor_args),
    }


def _default_repr(value) -> str | None:
    """Python source of an IR attr default (None: the attr is required)."""
    return None if value is None else repr(value)


def _constant_name(name: str) -> str:
    return name.upper() + "_IR"


def _irdef_imports(ir) -> list[str]:
    names = ["IrDef", "register"]
    if ir.attrs:
        names.append("Attr")
    if ir.inputs:
        names.append("Input")
    if ir.outputs:
        names.append("Output")
    return sorted(names, key=lambda n: (n[0].islower(), n))


def _converter_params(op: spec.OpSpec) -> list[str]:
    params = []
    for p in pysig.parameters(op):
        name = p.split(":")[0]
        arg = next((a for a in op.args if a.name == name), None)
        if arg is not None and is_symint(arg):  # a Python int, or a host tensor when symbolic
            p = p.replace(pysig.py_type(arg.type), f"{pysig.py_type(arg.type)} | ge.Tensor", 1)
        elif arg is not None and arg.is_tensor:
            ge_type = "ge.Tensor"
            if arg.is_list:
                ge_type = "list[ge.Tensor]"
            if arg.is_optional:
                ge_type += " | None"
            p = p.replace(pysig.py_type(arg.type), ge_type, 1)
        params.append(p)
    params.append("meta_outputs: ge.TensorSpec | list[ge.TensorSpec] | None = None")
    return params


def _converter_returns(op: spec.OpSpec) -> str:
    if not op.returns:
        return "None"
    return "ge.Tensor" if len(op.returns) == 1 else "tuple[ge.Tensor, ...]"


def _converter_body(op: spec.OpSpec, outputs_def) -> str:
    """``ge.custom_op(...)`` with every input and attr by name; in-place outputs dropped.
    SymInts are int64 inputs; an optional attr passed None is left unset (GE attrs have
    no None); a ``Tensor[]`` return is a dynamic output, as many tensors as its meta
    outputs."""
    ir_outputs = [o.name for o in outputs_def]
    attrs = ge_attr_args(op)
    given = [a for a in attrs if not a.is_optional]
    maybe = [a for a in attrs if a.is_optional]
    lines = []
    if maybe:
        lines.append("    attrs = {" + ", ".join(_attr_entry(a) for a in given) + "}")
        for a in maybe:
            lines += [f"    if {a.name} is not None:", f'        attrs["{a.name}"] = {_attr(a)}']
    lines += [f"    {_lhs(op, ir_outputs)}ge.custom_op(", f'        "{op.ir_name}",']
    inputs = ", ".join(
        f'"{a.name}": ' + (f"{_host_input(a)}({a.name})" if is_symint(a) else a.name)
        for a in ge_input_args(op)
    )
    lines.append(f"        inputs={{{inputs}}},")
    outputs = ", ".join(_output_entry(op, i, o) for i, o in enumerate(outputs_def))
    lines.append(f"        outputs=[{outputs}],")
    if maybe:
        lines.append("        attrs=attrs,")
    elif attrs:
        lines.append("        attrs={")
        lines += [f"            {_attr_entry(a)}," for a in attrs]
        lines.append("        },")
    lines.append("    )")
    kept = ir_outputs[len(op.mutated_args) :]
    if op.mutated_args and kept:
        lines.append(f"    return {', '.join(kept)}")
    return "\n".join(lines)


def _host_input(arg: spec.Arg) -> str:
    """The opsdk.runtime.converters helper that makes a SymInt or Scalar argument a GE input."""
    return "int64_input" if arg.type.startswith("SymInt") else "scalar_input"


def _attr(arg: spec.Arg) -> str:
    return f"attr.{attr_builder(arg)}({arg.name})"


def _attr_entry(arg: spec.Arg) -> str:
    return f'"{arg.name}": {_attr(arg)}'


def _output_entry(op: spec.OpSpec, index: int, output) -> str:
    """``"name"``, or ``("name", count)`` for a dynamic output."""
    if output.kind != "dynamic":
        return f'"{output.name}"'
    meta = "meta_outputs"
    if len(op.returns) > 1:
        meta += f"[{index - len(op.mutated_args)}]"
    return f'("{output.name}", len({meta}))'


def _lhs(op: spec.OpSpec, ir_outputs: list[str]) -> str:
    if not op.mutated_args:
        return "return "
    if not op.returns:
        return ""
    names = [f"_{n}" for n in ir_outputs[: len(op.mutated_args)]] + ir_outputs[
        len(op.mutated_args) :
    ]
    return f"{', '.join(names)} = "


def new(req: NewRequest) -> NewResult:
    """Write the op package to ``req.out/<name>``, moving an existing one aside with --force."""
    op = build_spec(req)
    out = Path(req.out).expanduser()
    target = out / op.name
    if target.exists() and not req.force:
        raise ScaffoldError(
            f"{target} already exists: choose another --out, or pass --force to move it "
            "aside (nothing is deleted)"
        )
    with staging_dir(out, op.name) as staging:
        project = render(op, req, staging)
        try:
            backup = _backup_path(target) if target.exists() else None
            if backup is not None:
                target.rename(backup)
            os.rename(project, target)
        except OSError as err:
            raise ScaffoldError(
                f"cannot write {target} ({err}): check permissions and space"
            ) from None
    return NewResult(target, backup)


@contextlib.contextmanager
def staging_dir(out: Path, name: str) -> Iterator[Path]:
    """A temporary directory inside ``out`` (so the final move is a rename), always removed."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".opsdk-new-{name}-", dir=out))
    except OSError as err:
        raise ScaffoldError(
            f"cannot write to {out} ({err.strerror}): pick a writable --out directory"
        ) from None
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def render(op: spec.OpSpec, req: NewRequest, staging: Path, package: str | None = None) -> Path:
    """Render and format the op's project in ``staging``; return its directory.
    ``package``: the op library the op is added to (see :mod:`opsdk.scaffold.into`)."""
    try:
        ctx = json.loads((TEMPLATE_DIR / "cookiecutter.json").read_text())
        ctx.update(context(op, req.style, req.autograd, package))
        generate_files(str(TEMPLATE_DIR), {"cookiecutter": ctx}, output_dir=str(staging))
        _drop_unused(staging / op.name, op, req.style, req.autograd)
        _format(staging / op.name)
    except OSError as err:
        raise ScaffoldError(
            f"cannot write {staging} ({err}): check permissions and space"
        ) from None
    return staging / op.name


# Template files that only some styles have (package-relative; the rest is shared).
_STYLE_FILES = {
    "{op}/schema.py": ("custom_op", "library"),
    "{op}/kernels.py": ("custom_op", "library"),
    "{op}/{op}.cpp": ("cpp",),
    ".clang-format": ("cpp",),
}


def _drop_unused(package: Path, op: spec.OpSpec, style: str, autograd: bool) -> None:
    """Cookiecutter renders every template file; remove those of the other styles, the
    autograd module unless asked for, and the input specs unless the op is the default
    add (a skeleton's inputs are unknown, so it runs on the schema-derived default)."""
    for pattern, styles in _STYLE_FILES.items():
        if style not in styles:
            (package / pattern.format(op=op.name)).unlink()
    if not autograd:
        (package / op.name / "autograd.py").unlink()
    if not op.is_default_add:
        (package / op.name / "specs.py").unlink()


def _format(package: Path) -> None:
    """Lay the rendered code out exactly as ``ruff format`` and ruff's isort would,
    with the package's own ruff settings, so generated code reads as hand-written;
    C++ likewise with clang-format and the package's ``.clang-format``."""
    commands = [
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."]
        for command in (["check", "--fix-only", "-q"], ["format", "-q"])
    ]
    sources = sorted(str(p.relative_to(package)) for p in package.rglob("*.cpp"))
    if sources:
        commands.append([_clang_format(), "-i", "--style=file", *sources])
    for command in commands:
        done = subprocess.run(command, cwd=package, capture_output=True, text=True)
        if done.returncode != 0:
            raise ScaffoldError(f"formatting the generated code failed: {done.stderr.strip()}")


def _clang_format() -> str:
    """The clang-format of opsdk's ``cpp`` extra, held to one major version so that a
    package regenerated elsewhere formats, and so compares, the same."""
    try:
        import clang_format
    except ImportError:
        raise ScaffoldError(
            "--style cpp formats its C++ with clang-format: pip install 'opsdk[cpp]'"
        ) from None
    return clang_format.get_executable("clang-format")


def _backup_path(target: Path) -> Path:
    for i in range(1, 1000):
        candidate = target.with_name(f"{target.name}.bak{i}")
        if not candidate.exists():
            return candidate
    raise ScaffoldError(f"too many backups of {target}: remove old {target.name}.bak* directories")
