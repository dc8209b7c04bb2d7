"""Which of a C++ kernel's arguments its aclnn call writes, read from the library's code.

A kernel calls its AscendC op as ``EXEC_NPU_CMD(aclnnX, a, b, ...)``: the arguments are
``aclnnXGetWorkspaceSize``'s, in order. Which of those the op writes is certain from one
of two places in the library: the ``aclnnXGetWorkspaceSize`` it defines by hand, whose
``L2_DFX_PHASE_1(..., DFX_OUT(...))`` names its outputs; else ``X``'s ``OpDef``, from
which opbuild generates the call with its inputs, then its attributes, then its outputs.
An op defined nowhere in the library is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from opsdk.audit.repository.scan import Registry, call_args

__all__ = ["Write", "marked", "placed", "written"]

_LAUNCHES = ("EXEC_NPU_CMD", "EXEC_NPU_CMD_V1", "EXEC_NPU_CMD_SYNC")
_OPDEF_PART = re.compile(r"\bthis\s*->\s*(Input|Output|Attr)\s*\(\s*\"(\w+)\"")


@dataclass(frozen=True)
class Write:
    """A kernel parameter the aclnn call writes: the parameter's index and name, the
    call (path, line), and what says the call writes it (``rule`` at its path, line)."""

    index: int
    param: str
    path: Path
    line: int
    aclnn: str
    rule: str
    rule_path: Path
    rule_line: int


def written(registry: Registry, function: str) -> list[Write]:
    """The parameters of the kernel ``function`` that its aclnn calls write."""
    found = []
    for definition in registry.functions(function):
        names = [_name(p) for p in definition.params]
        for launch in _LAUNCHES:
            for args, at in call_args(definition.body, launch):
                if not args:
                    continue
                outputs = _outputs(registry, args[0].strip())
                if outputs is None:
                    continue
                positions, rule = outputs
                line = definition.body_line + definition.body.count("\n", 0, at)
                for position in positions:
                    arg = args[1 + position].strip() if 1 + position < len(args) else ""
                    if arg in names:
                        found.append(
                            Write(
                                names.index(arg),
                                arg,
                                definition.path,
                                line,
                                args[0].strip(),
                                *rule,
                            )
                        )
    return found


def _outputs(registry: Registry, aclnn: str) -> tuple[list[int], tuple] | None:
    """The positions of ``aclnn``'s outputs among its arguments and what says so
    (rule, path, line), None when the library defines the op nowhere."""
    for definition in registry.functions(f"{aclnn}GetWorkspaceSize"):
        declared = re.search(r"\bDFX_OUT\s*\(([^)]*)\)", definition.body)
        if declared is None:
            continue
        names = [_name(p) for p in definition.params]
        outs = [n.strip() for n in declared.group(1).split(",") if n.strip()]
        rule = (f"the DFX_OUT of {aclnn}GetWorkspaceSize", definition.path, definition.line)
        return [names.index(n) for n in outs if n in names], rule
    op_type = aclnn.removeprefix("aclnn")
    if op_type not in registry.opdefs:
        return None
    path, start = registry.opdefs[op_type]
    text = registry.texts[path]
    parts = _OPDEF_PART.findall(text[start : _class_end(text, start)])
    inputs = [n for kind, n in parts if kind == "Input"]
    attrs = [n for kind, n in parts if kind == "Attr"]
    outputs = [n for kind, n in parts if kind == "Output"]
    first = len(inputs) + len(attrs)
    line = text.count("\n", 0, start) + 1
    rule = (f"opbuild's order (inputs, attributes, outputs) of the OpDef {op_type}", path, line)
    return list(range(first, first + len(outputs))), rule


def _class_end(text: str, start: int) -> int:
    """Where the class opened at ``start`` ends (its ``OP_ADD`` or the text's end)."""
    end = text.find("OP_ADD", start)
    return len(text) if end < 0 else end


def _name(param: str) -> str:
    """A C++ parameter's name (``const at::Tensor &x = {}`` -> ``x``)."""
    names = re.findall(r"[A-Za-z_]\w*", param.partition("=")[0])
    return names[-1] if names else ""


def marked(arg) -> str:
    """How the schema declares ``arg`` (a ``torch.Argument``) written: ``Tensor(a!) x``."""
    return f"{arg.type}(a!) {arg.name}".replace("Tensor?(a!)", "Tensor(a!)?")


def placed(source) -> str:
    """`` (path:line)`` of a :class:`~opsdk.audit.model.Source`, "" without one."""
    return f" ({source})" if source else ""
