"""The axes of the conformance matrix, importable without torch (the CLI parser needs them)."""

BACKENDS = ("eager", "opcheck", "aot_eager", "ge", "npugraph_ex")
DEFAULT_BACKENDS = BACKENDS
SHAPE_MODES = ("static", "dynamic", "mark_static")
STYLES = ("custom_op", "library", "cpp")
