"""A GE graph's picture drawn by Graphviz's dot (a process): SVG with the op and the marked
node, and a PNG."""

from __future__ import annotations

import pytest
from ge_pictures import inplace_graph

from opsdk.report.graphs import ge, render


@pytest.mark.skipif(render.missing() is not None, reason="Graphviz's dot is not installed")
def test_pictures_are_svg_with_the_op_and_the_marked_node(build, tmp_path):
    dot = ge.dot_of(build(inplace_graph("WriteX")), {"WriteX"}, marks={"a1": "wrong side"})
    render.render(dot, {"svg": tmp_path / "g.svg", "png": tmp_path / "g.png"})
    svg = render.inline_svg((tmp_path / "g.svg").read_text())
    assert svg.startswith("<svg") and 'class="node op"' in svg and 'class="node marked"' in svg
    assert "✗ wrong side" in svg and (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
