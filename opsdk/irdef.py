"""Public: the GE IR definition of an op (what CANN's ``REG_OP`` declares), stated in ``ir.py``."""

from opsdk._runtime.converters import bind
from opsdk._runtime.irdef import Attr, Input, IrDef, Output, lookup, register, registered

__all__ = ["Attr", "Input", "IrDef", "Output", "bind", "lookup", "register", "registered"]
