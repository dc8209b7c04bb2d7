"""Public: the GE IR definition of an op (what CANN's ``REG_OP`` declares), stated in ``ir.py``."""

from opsdk.runtime.converters import bind
from opsdk.runtime.irdef import Attr, Input, IrDef, Output, lookup, register, registered

__all__ = ["Attr", "Input", "IrDef", "Output", "bind", "lookup", "register", "registered"]
