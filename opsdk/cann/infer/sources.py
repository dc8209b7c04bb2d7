"""Where an op's C++ shape and dtype inference is, in an AscendC project.

Two registration styles (checked in ops-nn, ops-transformer and CANN's samples):

- ops-nn style: an ``op_host`` source (``<op>_infershape.cpp``) registers
  ``IMPL_OP_INFERSHAPE(Op).InferShape(f).InferDataType(g)`` (ops-transformer also writes
  ``IMPL_OP(Op)``); the file compiles as it is;
- samples style: the OpDef file itself defines ``namespace ge { graphStatus InferShape(
  gert::InferShapeContext*) ... }`` and its class calls ``this->SetInferShape(ge::InferShape)``
  (and ``SetInferDataType``). The file also holds tiling code and the OpDef, which need
  CANN's whole host API: only its ``namespace ge`` blocks are compiled (:func:`extracted`),
  with ``#line`` marks so the compiler and the report name the file's own lines;
- old style (a ``REG_OP`` project's ``op_proto/*.cc``): ``IMPLEMT_COMMON_INFERFUNC(f)`` or
  ``IMPLEMT_INFERFUNC(Op, f)`` on a ``ge::Operator``, registered with
  ``COMMON_INFER_FUNC_REG(Op, f)`` / ``INFER_FUNC_REG(Op, f)``: one function sets the
  outputs' shapes and dtypes, so it is the op's InferShape and its InferDataType; the file
  compiles as it is (opsdk's ``graph/operator_reg.h`` stands in for GE's operator API).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from opsdk.cann import files

__all__ = ["Function", "Inference", "extracted", "find", "find_all"]

_IMPL = re.compile(
    r"\bIMPL_OP(?:_INFERSHAPE)?\s*\(\s*(\w+)\s*\)((?:\s*\.\s*\w+\s*\([^;]*?\))*)\s*;"
)
_CHAINED = re.compile(r"\.\s*(InferShape|InferDataType)\s*\(\s*([\w:]+)\s*\)")
# ``.InputsDataDependency({1, INDEX_PADDINGS})``: the IR inputs whose value InferShape reads.
_DEPENDENCY = re.compile(r"\.\s*InputsDataDependency\s*\(\s*\{([^}]*)\}\s*\)")
_OPERATOR_REG = re.compile(r"\b(?:CUST_)?(?:COMMON_)?INFER_FUNC_REG\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_OPDEF_CLASS = re.compile(r"\bclass\s+(\w+)\s*:\s*public\s+(?:ops::)?OpDef\b")
_SET = re.compile(r"\bSet(InferShape|InferDataType)\s*\(\s*([\w:]+)\s*\)")
_GE_BLOCK = re.compile(r"^namespace\s+ge\s*\{", re.M)
_TEST_FOLDERS = frozenset({"test", "tests"})


@dataclass(frozen=True)
class Function:
    """A C++ inference function: its name and where it is defined (``line`` 0: not found)."""

    name: str
    file: Path
    line: int

    def __str__(self) -> str:
        return f"{self.name} ({self.file}:{self.line})" if self.line else self.name


@dataclass(frozen=True)
class Inference:
    """An op type's inference: the sources to compile (``extract``: only their ``namespace
    ge`` blocks, samples style) and its InferShape / InferDataType (None: it has none)."""

    op_type: str
    sources: tuple[Path, ...]
    infer_shape: Function | None
    infer_dtype: Function | None
    extract: bool = False
    # IR input indices whose value the functions read (``InputsDataDependency``), and the
    # words of that list no constant of the file or its headers beside it gives a number.
    data_inputs: tuple[int, ...] = ()
    unresolved: tuple[str, ...] = ()


def find(op_type: str, root: Path) -> Inference | None:
    """The inference of ``op_type`` under ``root`` (a project, an ``op_host`` folder or a
    file), None if it registers none."""
    return find_all(root).get(op_type)


def find_all(root: Path) -> dict[str, Inference]:
    """Every op type's inference registered under ``root``, by op type."""
    found: dict[str, Inference] = {}
    for path in _sources(Path(root)):
        text = files.head(path)
        if not any(word in text for word in ("IMPL_OP", "OpDef", "INFER_FUNC_REG")):
            continue  # none registers anything: the patterns below need these words
        for op_type, functions, depends in _registrations(text):
            inference = _inference(op_type, functions, path, text)
            found.setdefault(op_type, _depending(inference, depends, path, text))
        for op_type, function in _OPERATOR_REG.findall(_without_comments(text)):
            functions = {"InferShape": function, "InferDataType": function}
            found.setdefault(op_type, _inference(op_type, functions, path, text))
        match = _OPDEF_CLASS.search(text)
        functions = dict(_SET.findall(text))
        if match and functions and _GE_BLOCK.search(text):
            op_type = match.group(1)
            found.setdefault(op_type, _inference(op_type, functions, path, text, extract=True))
    return found


def _inference(op_type, functions: dict, path: Path, text: str, extract=False) -> Inference:
    shape, dtype = (_located(functions.get(k), path, text) for k in ("InferShape", "InferDataType"))
    return Inference(op_type, (path,), shape, dtype, extract)


def _sources(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*.c*")
        if p.suffix in (".cpp", ".cc")
        and not any(
            part.startswith(".") or part in _TEST_FOLDERS
            for part in p.relative_to(root).parent.parts
        )
    )


def _registrations(text: str):
    """(op type, {"InferShape": name, "InferDataType": name}, the words of its
    ``InputsDataDependency`` list) per ``IMPL_OP_INFERSHAPE``."""
    for match in _IMPL.finditer(_without_comments(text)):
        functions = dict(_CHAINED.findall(match.group(2)))
        depends = [w.strip() for d in _DEPENDENCY.findall(match.group(2)) for w in d.split(",")]
        if functions:
            yield match.group(1), functions, [w for w in depends if w]


def _depending(inference: Inference, words: list[str], path: Path, text: str) -> Inference:
    indices = [_index(word, path, text) for word in words]
    return replace(
        inference,
        data_inputs=tuple(i for i in indices if i is not None),
        unresolved=tuple(w for w, i in zip(words, indices, strict=True) if i is None),
    )


def _index(word: str, path: Path, text: str) -> int | None:
    """An ``InputsDataDependency`` entry as a number: a literal (``1``, ``1U``) or a constant
    the file, or a header it includes from its own folder, defines (``constexpr size_t
    INDEX_PADDINGS = 1;``); None when neither says."""
    literal = re.fullmatch(r"(\d+)[uUlL]*", word)
    if literal:
        return int(literal.group(1))
    if not re.fullmatch(r"\w+", word):
        return None
    definition = re.compile(rf"\b{word}\s*(?:=|\{{|\()\s*(\d+)[uUlL]*\s*[;)}}]")
    texts = [text]
    for name in _LOCAL_INCLUDE.findall(text):
        header = path.parent / name
        if header.is_file():
            texts.append(files.head(header))
    for candidate in texts:
        match = definition.search(_without_comments(candidate))
        if match:
            return int(match.group(1))
    return None


def _located(name: str | None, path: Path, text: str) -> Function | None:
    """``name`` with the line of its definition in ``text`` (a ``graphStatus name(`` that
    opens a body), 0 when it is defined elsewhere (a shared helper)."""
    if name is None:
        return None
    bare = re.escape(name.rpartition("::")[2])
    definition = re.compile(
        rf"graphStatus\s+{bare}\s*\([^;{{]*\)\s*\{{"
        rf"|\bIMPLEMT_(?:COMMON_)?INFERFUNC\s*\((?:\s*\w+\s*,)?\s*{bare}\s*\)\s*\{{"
    )
    match = definition.search(text)
    line = text.count("\n", 0, match.start()) + 1 if match else 0
    return Function(name, path, line)


def _without_comments(text: str) -> str:
    """``text`` with comments blanked (lengths and line breaks kept)."""

    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def extracted(inference: Inference) -> str:
    """The C++ compiled for a samples-style op: its file's ``namespace ge`` blocks and
    system includes, each under a ``#line`` mark, then the registration the OpDef's
    ``SetInferShape`` / ``SetInferDataType`` make."""
    (path,) = inference.sources
    text = files.head(path)
    clean = _without_comments(text)
    parts = ['#include "register/op_impl_registry.h"']
    parts += [line for line in text.splitlines() if re.match(r"\s*#include\s*<", line)]
    for match in _GE_BLOCK.finditer(clean):
        end = _block_end(clean, match.end() - 1)
        line = text.count("\n", 0, match.start()) + 1
        parts.append(f'#line {line} "{path}"\n{text[match.start() : end]}')
    functions = {"InferShape": inference.infer_shape, "InferDataType": inference.infer_dtype}
    chain = "".join(f".{kind}({fn.name})" for kind, fn in functions.items() if fn is not None)
    parts.append(f"IMPL_OP_INFERSHAPE({inference.op_type}){chain};")
    return "\n".join(parts) + "\n"


def _block_end(text: str, brace: int) -> int:
    """The index just past the ``}`` closing the ``{`` at ``brace`` (comments blanked;
    braces in string literals are rare enough in inference code to be ignored)."""
    depth = 0
    for i in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return len(text)
