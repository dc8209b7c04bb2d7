"""Op libraries: one package holding several ops, each added op a subpackage.

``opsdk new NAME`` writes a package whose modules are its first op;
``opsdk new OTHER --into DIR`` adds OTHER as the subpackage ``PKG/OTHER/`` with
the same modules. No existing file is edited: the package's ``__init__`` finds
its subpackages with :func:`import_added_ops`, so ``OPS`` (what ``opsdk check``
and the pytest plugin run) lists every op.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable


def import_added_ops(package: str, path: Iterable[str]) -> tuple:
    """Import each subpackage of ``package`` (its ``__path__``) and return the ops
    their ``OPS`` tuples declare, in subpackage name order; subpackages without
    ``OPS`` (helpers, tests) contribute nothing."""
    ops: list = []
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda m: m.name):
        if info.ispkg:
            module = importlib.import_module(f"{package}.{info.name}")
            ops.extend(getattr(module, "OPS", ()))
    return tuple(ops)
