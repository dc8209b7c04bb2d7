"""Public: make a cpp op's fast Python entry point traceable by ``torch.compile``."""

from opsdk._runtime.fast_entry import traceable

__all__ = ["traceable"]
