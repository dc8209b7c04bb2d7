"""Public: make an op's host arguments updatable on npugraph_ex/TorchAir replay
(``opsdk new ... --updatable ARG``), instead of a capture per value."""

from opsdk._runtime.updatable import register_updatable

__all__ = ["register_updatable"]
