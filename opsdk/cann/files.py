"""Which files under a directory define CANN ops, by format: msopgen JSON, AscendC
``OpDef`` sources (``op_host/*.cpp`` that ``OP_ADD`` an op) and headers holding
``REG_OP`` prototypes. ``opsdk new --from-cann DIR`` reads the first two (what a kernel
project is made from); ``opsdk audit --ir DIR`` all three (what GE checks a node against).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from opsdk.errors import SpecError

__all__ = ["MAX_BYTES", "head", "msopgen_files", "op_name", "opdef_files", "reg_op_files", "text"]

# The most opsdk reads of one CANN file. Definitions are small: an op_host OpDef source
# or an msopgen JSON is a few KB, a CANN op_proto header tens of KB (nn_norm_ops.h:
# 66 KB), TorchAir's REG_OP text of every GE op (auto_generated_ge_raw_ops.py) 3.1 MB.
# A larger file is no definition (a log, a build product) and is refused unread.
MAX_BYTES = 16 * 2**20

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
        p for p in _files(root, "*.cpp") if p.parent.name == "op_host" and _OPDEF.search(head(p))
    ]


def reg_op_files(root: Path) -> list[Path]:
    """The C/C++ headers under ``root`` holding a ``REG_OP(...)`` prototype."""
    return [p for p in _files(root, "*.h") if _REG_OP.search(head(p))]


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


def text(path: Path) -> str:
    """The text of the CANN file at ``path``, refused in one line (:class:`SpecError`)
    when it cannot be a definition: not a regular file (a device such as /dev/zero, a
    FIFO, a folder), over :data:`MAX_BYTES`, binary (a NUL byte) or not UTF-8."""
    data = _bytes(path)
    if len(data) > MAX_BYTES:
        raise SpecError(
            f"{path}: larger than {MAX_BYTES // 2**20} MiB, which no CANN definition is: "
            "give the op's OpDef .cpp, msopgen JSON or REG_OP header"
        )
    if b"\0" in data:
        raise SpecError(
            f"{path}: a binary file (NUL bytes), not a CANN definition: give the op's OpDef "
            ".cpp, msopgen JSON or REG_OP header"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SpecError(
            f"{path}: not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start}): "
            "save it as UTF-8"
        ) from None


def head(path: Path) -> str:
    """At most :data:`MAX_BYTES` of the file at ``path`` as text, undecodable bytes
    replaced; "" for what is not a readable regular file: enough to see what a file in a
    project folder defines, before :func:`text` reads (or refuses) those that define one."""
    try:
        return _bytes(path)[:MAX_BYTES].decode("utf-8", errors="replace")
    except (OSError, SpecError):
        return ""


def _bytes(path: Path) -> bytes:
    """Up to one byte more than :data:`MAX_BYTES` of the regular file at ``path``. It is
    opened without blocking (a FIFO's writer never has to come) and checked on the open
    descriptor, so the file read is the file checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as err:
        raise SpecError(f"{path}: cannot read it ({err.strerror})") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SpecError(
                f"{path}: not a regular file (a device, a FIFO or a folder): give the op's "
                "OpDef .cpp, msopgen JSON or REG_OP header"
            )
        return file.read(MAX_BYTES + 1)


def _is_msopgen(path: Path) -> bool:
    """Whether ``path`` holds msopgen JSON; a file :func:`text` refuses holds none (a JSON
    past the size limit is data, such as a build's compile_commands.json)."""
    try:
        data = json.loads(text(path))
    except (SpecError, json.JSONDecodeError):
        return False
    entries = data if isinstance(data, list) else [data]
    return bool(entries) and all(
        isinstance(e, dict) and "op" in e and "case_name" not in e for e in entries
    )
