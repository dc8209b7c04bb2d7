"""Public: build and load a ``--style cpp`` op's C++ file (cached by its source)."""

from opsdk._runtime.cpp_build import load_library, load_module, reference

__all__ = ["load_library", "load_module", "reference"]
