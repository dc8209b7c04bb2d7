"""Graphviz's ``dot`` turns a pydot graph into SVG (reports) and PNG (pasting into an issue).

``dot`` is a system program, not a Python package: pydot builds the graph's source,
and where ``dot`` is missing a picture cannot be drawn; the caller then says so in one
line and shows the graph as text.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pydot

__all__ = ["INSTALL", "RenderError", "inline_svg", "missing", "render"]

INSTALL = "apt-get install graphviz, brew install graphviz or conda install graphviz"
_TIMEOUT = 120  # seconds for one graph; a model-sized one takes a few


class RenderError(Exception):
    """``dot`` could not draw a graph; the message says why, in one line."""


def missing() -> str | None:
    """Why no picture can be drawn here, in one line; None when ``dot`` is on PATH."""
    if shutil.which("dot") is None:
        return f"Graphviz's dot is not on PATH (install it: {INSTALL})"
    return None


def render(dot: pydot.Dot, outputs: dict[str, Path]) -> None:
    """Write ``dot`` in each format of ``outputs`` (``{"svg": path, "png": path}``), in
    one run of Graphviz's ``dot``."""
    program = shutil.which("dot")
    if program is None:
        raise RenderError(missing())
    argv = [program]
    for fmt, path in outputs.items():
        argv += [f"-T{fmt}", "-o", str(path)]
    try:
        done = subprocess.run(
            argv, input=dot.to_string().encode(), capture_output=True, timeout=_TIMEOUT
        )
    except subprocess.TimeoutExpired:
        raise RenderError(f"dot ran past {_TIMEOUT} s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise RenderError(f"dot exited with code {done.returncode}: {said[0] if said else ''}")


def inline_svg(text: str) -> str:
    """An SVG file's ``<svg>`` element, for a page to hold inline (no XML prolog, no DTD)."""
    start = text.find("<svg")
    return text[start:].strip() if start >= 0 else ""
