"""Axes of the conformance matrix and the scaffold, importable without torch (the CLI
parser needs them); the backend columns are :mod:`opsdk.harness.columns`."""

SHAPE_MODES = ("static", "dynamic", "mark_static")
STYLES = ("library", "custom_op", "cpp")
# The fastest registration style that passes every column with no build toolchain:
# a library-style call costs about a third of a custom_op one (bench/host_overhead.py).
DEFAULT_STYLE = "library"
# `opsdk audit`'s checks, each with the shape modes it runs in (the schema's do not vary).
AUDIT_CHECKS = {
    "schema": ("static",),
    "fake": SHAPE_MODES,
    "converter": ("static", "dynamic"),
}
