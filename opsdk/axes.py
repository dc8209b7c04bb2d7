"""Axes of the conformance matrix and the scaffold, importable without torch (the CLI
parser needs them); the columns and the audit's checks are :mod:`opsdk.harness.columns`'
registry."""

SHAPE_MODES = ("static", "dynamic", "mark_static")
STYLES = ("library", "custom_op", "cpp")
# The fastest registration style that passes every column with no build toolchain:
# a library-style call costs about a third of a custom_op one (bench/host_overhead.py).
DEFAULT_STYLE = "library"
