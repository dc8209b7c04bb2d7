"""Where an op's TilingFunc is, in an AscendC project: an ``op_host`` source registers
``IMPL_OP_OPTILING(Op).Tiling(f).TilingParse<CompileInfo>(p)`` (ops-transformer also
writes ``IMPL_OP(Op)...Tiling(f)``). The tiling is compiled from that file and the other
``*tiling*.cpp`` of its folder (helpers it calls: ``rms_norm_tiling_arch35.cpp``), first
the registering one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from opsdk.cann import files
from opsdk.cann.infer.sources import Function, Inference, _located, _sources, _without_comments

__all__ = ["TilingSource", "find", "find_all"]

_IMPL = re.compile(
    r"\bIMPL_OP(?:_OPTILING)?\s*\(\s*(\w+)\s*\)((?:\s*\.\s*\w+\s*(?:<[^;>]*>)?\s*\([^;]*?\))*)\s*;"
)
_TILING = re.compile(r"\.\s*Tiling\s*\(\s*([\w:]+)")
_PARSE = re.compile(r"\.\s*TilingParse\s*<[^>]*>\s*\(\s*([\w:]+)")


@dataclass(frozen=True)
class TilingSource:
    """An op type's tiling: the sources to compile (the registering file first), its
    TilingFunc and TilingParse (None: it registers none)."""

    op_type: str
    sources: tuple[Path, ...]
    function: Function
    parse: Function | None

    def as_inference(self) -> Inference:
        """The sources as the inference build takes them (it compiles any sources)."""
        return Inference(self.op_type, self.sources, None, None)


def find(op_type: str, root: Path) -> TilingSource | None:
    """The tiling of ``op_type`` under ``root`` (a project, an ``op_host`` folder or a
    file), None if it registers none."""
    return find_all(root).get(op_type)


def find_all(root: Path) -> dict[str, TilingSource]:
    """Every op type's tiling registered under ``root``, by op type."""
    found: dict[str, TilingSource] = {}
    for path in _sources(Path(root)):
        text = files.head(path)
        if "IMPL_OP" not in text or ".Tiling" not in text:
            continue
        for match in _IMPL.finditer(_without_comments(text)):
            function = _TILING.search(match.group(2))
            if function is None:
                continue
            parse = _PARSE.search(match.group(2))
            sources = (path, *sorted(p for p in path.parent.glob("*tiling*.cpp") if p != path))
            found.setdefault(
                match.group(1),
                TilingSource(
                    match.group(1),
                    sources,
                    _defined(function.group(1), sources),
                    _defined(parse.group(1), sources) if parse else None,
                ),
            )
    return found


def _defined(name: str, sources: tuple[Path, ...]) -> Function:
    """``name`` where one of ``sources`` defines it (else in the first, line 0)."""
    for path in sources:
        function = _located(name, path, files.head(path))
        if function is not None and function.line:
            return function
    return Function(name, sources[0], 0)
