"""Compile an op's tiling into a shared library, once per set of sources: the inference
build's machinery (:mod:`opsdk.cann.infer.build`: the project's include folders, CANN's,
the cache keyed on every source), with the tiling's stand-ins (``include/``: the tiling
contexts, the chip's platform API, the tiling-data macros, template tiling keys) searched
before inference's, and the tiling entry. A tiling is built with AddressSanitizer (and
debug lines): an out-of-bounds read of its own arrays (``dimarr[-1]``), a null deref or
a division by zero ends its worker with a report naming the source line; the worker
preloads the sanitizer's runtime (:func:`environ`).
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from opsdk.cann.infer.build import INCLUDE as INFER_INCLUDE
from opsdk.cann.infer.build import Built, Recipe
from opsdk.cann.infer.build import build as build_library
from opsdk.cann.tiling.sources import TilingSource

__all__ = ["INCLUDE", "TILING", "build", "environ"]

INCLUDE = Path(__file__).resolve().parent / "include"
TILING = Recipe(
    "tiling",
    (INCLUDE, INFER_INCLUDE),
    INCLUDE / "opsdk_tiling_entry.cpp",
    ("-g1", "-fsanitize=address", "-fno-omit-frame-pointer"),
)


def build(source: TilingSource, root: Path | None = None) -> Built:
    """The library of ``source``'s tiling (``root``: the project, searched for the headers
    it includes), built now unless cached. Raises :class:`~opsdk.cann.infer.CompileFailure`."""
    return build_library(source.as_inference(), root, TILING)


@functools.cache
def environ() -> dict[str, str]:
    """What a tiling library's worker runs with: the compiler's AddressSanitizer runtime
    preloaded (ctypes loads the library into a Python that lacks it), leaks not reported."""
    runtime = subprocess.run(
        [os.environ.get("CXX", "g++"), "-print-file-name=libasan.so"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {"LD_PRELOAD": runtime, "ASAN_OPTIONS": "detect_leaks=0"}
