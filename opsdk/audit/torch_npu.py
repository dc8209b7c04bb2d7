"""torch_npu's op library, read from the torch-npu wheel opsdk fetches for TorchAir.

Everything comes from the wheel (:func:`opsdk._runtime.locator.torch_npu_file`), never
from opsdk: the schemas from torch_npu's codegen yaml, the Meta functions from
op-plugin's ``_meta_registrations.py`` (its own source, compiled under its own file name
so tracebacks point into it), TorchAir's converters under ``ge_converter/custom/``
imported unchanged, the ``REG_OP`` prototypes from the docstrings of TorchAir's generated
GE API, and the in-place/functional pairs npugraph_ex's reinplace pass registers.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from opsdk._runtime import locator

__all__ = [
    "CONVERTERS",
    "CONVERTER_MODULE",
    "GE_RAW_OPS",
    "META",
    "REINPLACE",
    "SCHEMAS",
    "Converted",
    "converted",
    "converter_specs",
    "meta_source",
    "prototype",
    "prototypes",
    "reinplace_pairs",
    "schema",
    "wheel_text",
]

SCHEMAS = "csrc/aten/npu_native_functions_by_codegen.yaml"
META = "op_plugin/meta/_meta_registrations.py"
GE_RAW_OPS = "dynamo/torchair/_ge_concrete_graph/auto_generated_ge_raw_ops.py"
CONVERTERS = "dynamo/torchair/_ge_concrete_graph/ge_converter/custom"
CONVERTER_MODULE = "torchair._ge_concrete_graph.ge_converter.custom"
REINPLACE = "dynamo/npugraph_ex/_acl_concrete_graph/graph_pass.py"


@functools.cache
def wheel_text(relpath: str) -> str:
    return locator.torch_npu_file(relpath).read_text()


def schema(name: str) -> str | None:
    """The op's schema (``name`` or ``name.overload``): its ``func:`` line in torch_npu's
    codegen yaml, or None when the yaml has none."""
    found = re.search(rf"^\s*(?:- )?func: ({re.escape(name)}\(.*)$", wheel_text(SCHEMAS), re.M)
    return found.group(1).strip() if found else None


@functools.cache
def _meta_body() -> tuple[ast.stmt, ...]:
    """The Meta file's module-level statements this process runs: a module-level ``if``
    (on ``torch.__version__``, ``os.getenv(...)``) is replaced by its live branch."""
    import os

    import torch

    def live(nodes):
        for node in nodes:
            if isinstance(node, ast.If):
                test = compile(ast.Expression(node.test), META, "eval")
                taken = eval(test, {"torch": torch, "os": os})  # noqa: S307
                yield from live(node.body if taken else node.orelse)
            else:
                yield node

    return tuple(live(ast.parse(wheel_text(META)).body))


def _registers(node, name: str) -> bool:
    """``node`` is a function decorated ``@impl(m, "name")``."""
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call)
        and len(d.args) == 2
        and isinstance(d.args[1], ast.Constant)
        and d.args[1].value == name
        for d in node.decorator_list
    )


def meta_nodes(names) -> list[ast.stmt]:
    """The module-level statements that register the Meta functions of ``names`` (op
    names, overloads dropped), with everything they read from the module: its imports,
    constants and helper functions, transitively, in file order."""
    body = _meta_body()
    chosen = {i for i, node in enumerate(body) if any(_registers(node, n) for n in names)}
    defines: dict[str, list[int]] = {}  # a name -> the statements defining it
    for i, node in enumerate(body):
        for name in _defined(node):
            defines.setdefault(name, []).append(i)
    todo = list(chosen)
    while todo:
        node = body[todo.pop()]
        for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            for i in defines.get(used, ()):
                # another op's Meta function is not ours to register
                if i not in chosen and not _is_registration(body[i]):
                    chosen.add(i)
                    todo.append(i)
    return [body[i] for i in sorted(chosen)]


def _is_registration(node) -> bool:
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", None) == "impl"
        for d in node.decorator_list
    )


def _defined(node) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return []


def meta_source(names) -> str:
    """:func:`meta_nodes` as source text (what an op package's ``fake.py`` holds)."""
    lines = wheel_text(META).splitlines()
    return "\n\n\n".join(
        "\n".join(lines[_first_line(node) - 1 : node.end_lineno]) for node in meta_nodes(names)
    )


def meta_line(name: str) -> int | None:
    """The line of the Meta function torch_npu registers for op ``name``."""
    found = [n for n in _meta_body() if _registers(n, name)]
    return _first_line(found[0]) if found else None


def _first_line(node) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


@functools.cache
def prototypes() -> dict[str, str]:
    """Every ``REG_OP`` prototype TorchAir's generated GE API documents, by op type."""
    found = re.finditer(r'"""(REG_OP\((\w+)\).*?)"""', wheel_text(GE_RAW_OPS), re.S)
    return {
        m.group(2): "\n".join(line.strip().removesuffix("\\n") for line in m.group(1).splitlines())
        for m in found
    }


def prototype(op_type: str) -> str:
    """CANN's ``REG_OP(op_type)`` prototype, as TorchAir's generated GE API documents it."""
    text = prototypes().get(op_type)
    if text is None:
        raise KeyError(f"no REG_OP({op_type}) in {GE_RAW_OPS}")
    return text


def converter_specs(module: str) -> str | None:
    """The cases TorchAir's converter file declares (``declare_supported([...])``), as
    source, or None when it declares none."""
    text = wheel_text(f"{CONVERTERS}/{module}.py")
    for node in ast.walk(ast.parse(text)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "declare_supported"
        ):
            return ast.get_source_segment(text, node.args[0])
    return None


@dataclass(frozen=True)
class Converted:
    """One ``torch.ops.npu`` overload TorchAir's ``custom/`` converts: ``name`` and
    ``overload`` as torch spells them, the converter's module and line."""

    name: str
    overload: str
    module: str
    line: int

    @property
    def qualname(self) -> str:
        return f"npu::{self.name}" + ("" if self.overload == "default" else f".{self.overload}")

    @property
    def path(self) -> str:
        return str(locator.torch_npu_file(f"{CONVERTERS}/{self.module}.py"))


@functools.cache
def converted() -> tuple[Converted, ...]:
    """Every overload a converter under ``ge_converter/custom/`` registers, by file and line."""
    folder = locator.torch_npu_file(CONVERTERS)
    found = []
    for path in sorted(Path(folder).glob("*.py")):
        # as a decorator, or called on a function defined before (grouped_matmul.py)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and (target := _registered_op(node)):
                found.append(Converted(*target, path.stem, node.lineno))
    found.sort(key=lambda c: (c.module, c.line))
    return tuple(found)


def _registered_op(decorator) -> tuple[str, str] | None:
    """``(name, overload)`` of ``@register_fx_node_ge_converter(torch.ops.npu.NAME.OVERLOAD)``."""
    if not (
        isinstance(decorator, ast.Call)
        and getattr(decorator.func, "id", None) == "register_fx_node_ge_converter"
        and decorator.args
    ):
        return None
    text = ast.unparse(decorator.args[0])
    found = re.fullmatch(r"torch\.ops\.npu\.(\w+)\.(\w+)", text)
    return (found.group(1), found.group(2)) if found else None


def reinplace_pairs() -> list[tuple[str, str, tuple[int, ...], int]]:
    """npugraph_ex's reinplace registrations: ``(functional, inplace, mutated_arg, line)``
    for each ``register_inplaceable_npu_op`` call in its graph pass."""
    pairs = []
    for node in ast.walk(ast.parse(wheel_text(REINPLACE))):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "register_inplaceable_npu_op"
            and len(node.args) >= 2
        ):
            args = [ast.literal_eval(a) for a in node.args[:3]]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            mutated = args[2] if len(args) > 2 else kwargs["mutated_arg"]
            pairs.append((args[0], args[1], tuple(mutated), node.lineno))
    return pairs
