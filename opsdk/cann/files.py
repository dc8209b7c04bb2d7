"""Which files under a directory define CANN ops, by format: msopgen JSON, AscendC
``OpDef`` sources (``op_host/*.cpp`` that ``OP_ADD`` an op) and headers holding
``REG_OP`` prototypes. ``opsdk new --from-cann DIR`` reads the first two (what a kernel
project is made from); ``opsdk audit --ir DIR`` all three (what GE checks a node against).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["msopgen_files", "op_name", "opdef_files", "reg_op_files"]

# What marks an op_host source that defines an op (OP_ADD registers the OpDef class).
_OPDEF = re.compile(r"\bOP_ADD\s*\(")
_REG_OP = re.compile(r"\bREG_OP\s*\(")
_TEST_FOLDERS = frozenset({"test", "tests"})


def msopgen_files(root: Path) -> list[Path]:
    """The msopgen JSON files under ``root``: an op object, or a list of them. msopst's
    test cases (``testcases/st/**/*_case.json``) look alike but name each case
    (``case_name``): they describe calls of an op, not the op. Other JSON
    (``CMakePresets.json``) is none of them."""
    return [p for p in _files(root, "*.json") if _is_msopgen(p)]


def opdef_files(root: Path) -> list[Path]:
    """The ``op_host/*.cpp`` sources under ``root`` (or in it, when it is an ``op_host``)
    that define an op (tiling and shape-inference sources beside them define none)."""
    return [
        p for p in _files(root, "*.cpp") if p.parent.name == "op_host" and _OPDEF.search(_text(p))
    ]


def reg_op_files(root: Path) -> list[Path]:
    """The C/C++ headers under ``root`` holding a ``REG_OP(...)`` prototype."""
    return [p for p in _files(root, "*.h") if _REG_OP.search(_text(p))]


def op_name(op_type: str, path: Path, fallback: str) -> str:
    """The op's snake_case name as its own file spells it (``top_k_v2_def.cpp`` for
    ``TopKV2``, where splitting at capitals gives ``top_kv2``), else ``fallback``."""
    stem = re.sub(r"_(def|proto)$", "", path.stem.lower())
    return stem if stem.replace("_", "") == op_type.lower() else fallback


def _files(root: Path, pattern: str) -> list[Path]:
    """Files matching ``pattern`` at any depth, outside hidden directories (.git...) and
    test folders (ops-nn's ``tests/ut/op_host/`` hold stub prototypes of other ops)."""
    return sorted(
        p
        for p in root.rglob(pattern)
        if p.is_file()
        and not any(
            part.startswith(".") or part in _TEST_FOLDERS
            for part in p.relative_to(root).parent.parts
        )
    )


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _is_msopgen(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    entries = data if isinstance(data, list) else [data]
    return bool(entries) and all(
        isinstance(e, dict) and "op" in e and "case_name" not in e for e in entries
    )
