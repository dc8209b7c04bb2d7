"""Public: register an op's pieces only where its own library has not (``opsdk new --attach``)."""

from opsdk._runtime.attach import define, impl, register_converter, register_fake

__all__ = ["define", "impl", "register_converter", "register_fake"]
