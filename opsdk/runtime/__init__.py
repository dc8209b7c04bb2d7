"""The op runtime: what op packages need at run time, and nothing from opsdk's tools.

Op packages import it through the public front modules (``opsdk.device``,
``opsdk.irdef``, ``opsdk.inputs``, ``opsdk.meta``, ``opsdk.converters``,
``opsdk.oplib``, ``opsdk.cpp_build``, ``opsdk.fast_entry``, ``opsdk.ImplementMe``);
the modules here are their implementation and depend on torch alone.
"""
