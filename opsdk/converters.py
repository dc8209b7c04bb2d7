"""Public: what an op package's TorchAir converter uses.

``load_converters`` imports a converter module once TorchAir is importable;
``int64_input`` (``int32_input`` for an input declared int32 only) and
``scalar_input`` turn SymInt and Scalar arguments into the GE host inputs they are.
"""

from opsdk._runtime.converters import int32_input, int64_input, load_converters, scalar_input

__all__ = ["int32_input", "int64_input", "load_converters", "scalar_input"]
