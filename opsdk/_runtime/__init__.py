"""The op runtime: what op packages need at run time, and nothing from opsdk's tools.

Op packages import it through the public front modules (``opsdk.device``,
``opsdk.irdef``, ``opsdk.inputs``, ``opsdk.meta``, ``opsdk.converters``,
``opsdk.oplib``, ``opsdk.cpp_build``, ``opsdk.fast_entry``, ``opsdk.ImplementMe``);
the modules here are their implementation and depend on torch alone. ``npu`` is the
emulated npu device (its streams, graph capture and a torch_npu stand-in) that
:func:`opsdk.device.ensure_npu` installs where torch_npu cannot run; ``locator`` finds
(or fetches) the torch-npu wheel's Python it runs; ``patches`` holds every patch of a
private torch, TorchAir or torch_npu API.
"""
