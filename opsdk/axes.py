"""The axes of the conformance matrix, importable without torch (the CLI parser needs them)."""

BACKENDS = ("eager", "opcheck", "aot_eager", "ge", "npugraph_ex")
DEFAULT_BACKENDS = BACKENDS
# The columns that compile with torch.compile (and can share a case's trace).
COMPILED_BACKENDS = ("aot_eager", "ge", "npugraph_ex")
SHAPE_MODES = ("static", "dynamic", "mark_static")
STYLES = ("library", "custom_op", "cpp")
# The fastest registration style that passes every column with no build toolchain:
# a library-style call costs about a third of a custom_op one (bench/host_overhead.py).
DEFAULT_STYLE = "library"
