"""Public: op libraries, where each op `opsdk new --into` adds is a subpackage."""

from opsdk._runtime.oplib import import_added_ops

__all__ = ["import_added_ops"]
