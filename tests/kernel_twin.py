"""What the kernel twin's tests share: TilingRun values built by hand (the fields a
launch reads; opsdk.cann.tiling produces whole ones from an op's real TilingFunc), the
planted projects, and the public kernels read from the mirrors at test time."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import mirrors

from opsdk.cann.tiling import Field, TilingLayout

PROJECTS = Path(__file__).resolve().parent / "e2e" / "kernel_projects"


@dataclass(frozen=True)
class TilingRun:
    data: bytes
    block_dim: int
    tiling_key: int
    workspace_sizes: tuple[int, ...]


# The scale project's tiling data (a nested struct), as twin-host would read it.
SCALE_LAYOUT = TilingLayout(
    "ScaleTilingData",
    (
        Field("total", "uint32_t", 1, 0),
        Field("scale", "float", 1, 4),
        Field(
            "split", "", 1, 8, TilingLayout("ScaleSplit", (Field("perCore", "uint32_t", 1, 0),), 8)
        ),
    ),
    16,
)


def extract(tmp_path_factory, repo: str, *folders: str) -> Path:
    """``folders`` of a mirrored hicann repository, extracted (skip without the mirror)."""
    return mirrors.extract(tmp_path_factory, f"hicann+{repo}", *folders)


_SIZES = {"uint64_t": 8, "int64_t": 8, "uint32_t": 4, "int32_t": 4, "float": 4, "uint8_t": 1}
_CODES = {
    "uint64_t": "Q", "int64_t": "q", "uint32_t": "I", "int32_t": "i", "float": "f", "uint8_t": "B",
}  # fmt: skip


def layout_of(header: str, name: str) -> TilingLayout:
    """A BEGIN_TILING_DATA_DEF struct's layout read from its header (fields at their
    natural alignment), as twin-host reads it from the compiled host library."""
    body = re.search(rf"BEGIN_TILING_DATA_DEF\({name}\)(.*?)END_TILING_DATA_DEF", header, re.S)[1]
    fields, at = [], 0
    for ctype, field in re.findall(r"TILING_DATA_FIELD_DEF\((\w+),\s*(\w+)\)", body):
        size = _SIZES[ctype]
        at = -(-at // size) * size
        fields.append(Field(field, ctype, 1, at))
        at += size
    align = max(_SIZES[f.ctype] for f in fields)
    return TilingLayout(name, tuple(fields), -(-at // align) * align)


def pack(layout: TilingLayout, values: dict) -> bytes:
    """The tiling data of ``values`` (field -> value; others 0) in ``layout``."""
    data = bytearray(layout.size)
    for field in layout.fields:
        struct.pack_into("<" + _CODES[field.ctype], data, field.offset, values.get(field.name, 0))
    return bytes(data)
