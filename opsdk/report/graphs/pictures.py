"""A cell's pictures on disk: drawn as the run goes, read back by the reports.

:class:`Pictures` receives each ``ge``/``npugraph_ex`` cell's graphs
(:mod:`opsdk.harness.graph_hook`) and draws those of failing cells (every cell's with
``every``) into ``DIR/ns.op.overload/LABEL/`` (the folder ``--dump`` uses for the same
cell): ``fx.svg`` and, for ``ge``, ``ge.svg``, for ``fusion`` ``fx_before.svg`` (the graph
the pattern pass got; ``fx.svg`` is what it made of it), with PNGs beside them when asked. A
graph that cannot be drawn (no ``dot``, or ``dot`` failed) is written as text instead,
``fx.txt``/``ge.txt``, whose first line says why: a picture never fails a cell. One the
disk cannot take is kept in :attr:`Pictures.unwritten`, for `opsdk graph` to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from opsdk import _outputs
from opsdk.errors import OutputError
from opsdk.harness.cell import case_dir
from opsdk.harness.graph_hook import COLUMNS, CellGraphs
from opsdk.report.graphs import render

__all__ = ["CAPTIONS", "NAMES", "Pictures", "found", "wanted"]

# The graphs of a cell, in the order reports show them, with what each is.
CAPTIONS = {
    "fx_before": "FX graph before the fusion pass: the code the pattern searches",
    "fx": "FX graph after AOT: what the backend lowered (the op highlighted)",
    "ge": "GE graph TorchAir built for the engine (the op highlighted)",
}


# How a link names each graph.
NAMES = {"fx_before": "FX graph before the fusion pass", "fx": "FX graph", "ge": "GE graph"}


def wanted(backend: str, failed: bool, every: bool) -> bool:
    """Whether a cell of ``backend`` that ``failed`` (or not) gets pictures."""
    return backend in COLUMNS and (failed or every)


@dataclass
class Pictures:
    """Draws the graphs handed over into ``directory`` (given as ``flag``); ``every``:
    passing cells too; ``png``: a PNG beside each SVG."""

    directory: Path
    every: bool = False
    png: bool = False
    flag: str = "--graphs"
    drawn: list[Path] = field(default_factory=list)  # the files written, in order
    unwritten: list[OutputError] = field(default_factory=list)  # those the disk did not take

    def __call__(self, graphs: CellGraphs) -> None:
        if not wanted(graphs.column, graphs.failed, self.every):
            return
        self.forget([(graphs.op, graphs.label)])
        folder = Path(self.directory) / case_dir(graphs.op, graphs.label)
        folder.mkdir(parents=True, exist_ok=True)
        from opsdk.offline.ge import dump as ge_dump  # torch, pydot: only to draw
        from opsdk.report.graphs import fx, ge

        if graphs.fx_before is not None:
            self._draw(
                folder / "fx_before",
                lambda: fx.dot_of(graphs.fx_before),
                lambda: graphs.fx_before.print_readable(False),
            )
        self._draw(
            folder / "fx",
            lambda: fx.dot_of(graphs.fx, graphs.op_nodes, graphs.marks),
            lambda: graphs.fx.print_readable(False),
        )
        if graphs.ge is not None:
            self._draw(
                folder / "ge",
                lambda: ge.dot_of(graphs.ge, graphs.op_types, graphs.symbols, graphs.marks),
                lambda: ge_dump.readable(graphs.ge),
            )

    def forget(self, cells) -> None:
        """Remove what an earlier run drew of ``cells`` (``(op, label)`` pairs): a cell
        that now fails before compiling must not show an old picture."""
        for op, label in cells:
            folder = Path(self.directory) / case_dir(op, label)
            for kind in CAPTIONS:
                for suffix in (".svg", ".png", ".txt"):
                    (folder / kind).with_suffix(suffix).unlink(missing_ok=True)

    def _draw(self, stem: Path, picture, text) -> None:
        formats = ("svg", "png") if self.png else ("svg",)
        outputs = {fmt: stem.with_suffix(f".{fmt}") for fmt in formats}
        try:
            render.render(picture(), outputs)
            self.drawn += outputs.values()
        except render.RenderError as err:
            for partial in outputs.values():  # what dot wrote before failing is no picture
                partial.unlink(missing_ok=True)
            path = stem.with_suffix(".txt")
            try:
                _outputs.write(self.flag, path, f"not drawn: {err}\n{text()}")
            except OutputError as lost:
                self.unwritten.append(lost)
                raise
            self.drawn.append(path)


def found(directory: Path | None, op: str, label: str) -> dict[str, Path]:
    """The pictures (or their text stand-ins) of a cell, by kind (:data:`CAPTIONS`)."""
    if directory is None:
        return {}
    folder = Path(directory) / case_dir(op, label)
    pictures = {}
    for kind in CAPTIONS:
        for suffix in (".svg", ".txt"):
            path = folder / f"{kind}{suffix}"
            if path.is_file():
                pictures[kind] = path
                break
    return pictures
