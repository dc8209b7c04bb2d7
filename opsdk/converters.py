"""Public: what an op package's TorchAir converter uses.

``load_converters`` imports a converter module once TorchAir is importable;
``int64_input`` and ``scalar_input`` turn SymInt and Scalar arguments into the
GE host inputs they are.
"""

from opsdk._runtime.converters import int64_input, load_converters, scalar_input

__all__ = ["int64_input", "load_converters", "scalar_input"]
