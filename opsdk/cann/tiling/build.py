"""Compile an op's tiling into a shared library, once per set of sources: the inference
build's machinery (:mod:`opsdk.cann.infer.build`: the project's include folders, CANN's,
the cache keyed on every source), with the tiling's stand-ins (``include/``: the tiling
contexts, the chip's platform API, the tiling-data macros, template tiling keys) searched
before inference's, and the tiling entry.
"""

from __future__ import annotations

from pathlib import Path

from opsdk.cann.infer.build import INCLUDE as INFER_INCLUDE
from opsdk.cann.infer.build import Built, Recipe
from opsdk.cann.infer.build import build as build_library
from opsdk.cann.tiling.sources import TilingSource

__all__ = ["INCLUDE", "TILING", "build"]

INCLUDE = Path(__file__).resolve().parent / "include"
TILING = Recipe("tiling", (INCLUDE, INFER_INCLUDE), INCLUDE / "opsdk_tiling_entry.cpp")


def build(source: TilingSource, root: Path | None = None) -> Built:
    """The library of ``source``'s tiling (``root``: the project, searched for the headers
    it includes), built now unless cached. Raises :class:`~opsdk.cann.infer.BuildFailure`."""
    return build_library(source.as_inference(), root, TILING)
