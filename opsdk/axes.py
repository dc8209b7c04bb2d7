"""Axes of the conformance matrix and the scaffold, importable without torch (the CLI
parser needs them); the columns and the audit's checks are :mod:`opsdk.harness.columns`'
registry."""

SHAPE_MODES = ("static", "dynamic", "mark_static")
STYLES = ("library", "custom_op", "cpp")
# The graph modes an op package is made for (``--modes``): GE through a TorchAir converter
# and IR, npugraph_ex (capture and replay) through its fake function alone.
GRAPH_MODES = ("ge", "npugraph_ex")
# The fastest registration style that passes every column with no build toolchain:
# a library-style call costs about a third of a custom_op one (bench/host_overhead.py).
DEFAULT_STYLE = "library"
