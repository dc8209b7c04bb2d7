"""CANN's own shape inference, offline: compile an op's C++ InferShape / InferDataType
against opsdk's stand-in headers of the gert runtime API and call it from Python, so
the fake function a graph is traced with can be held to what GE and the kernel use.

:mod:`.sources` finds an op's inference in its project, :mod:`.build` compiles and
caches it, :mod:`.call` runs it on a node, :mod:`.disagreements` judges a fake's outputs by it.
"""

from opsdk.cann.infer.build import INCLUDE, Built, CompileFailure, build, header_dirs, project_files
from opsdk.cann.infer.call import FORMATS, Crashed, Given, Inferred, Library, Unlinked
from opsdk.cann.infer.chip import CHIPS, Chip, chip, resources
from opsdk.cann.infer.sources import Function, Inference, find, find_all

__all__ = [
    "CHIPS",
    "FORMATS",
    "INCLUDE",
    "Built",
    "Chip",
    "CompileFailure",
    "Crashed",
    "Function",
    "Given",
    "Inference",
    "Inferred",
    "Library",
    "Unlinked",
    "build",
    "chip",
    "find",
    "find_all",
    "header_dirs",
    "project_files",
    "resources",
]
