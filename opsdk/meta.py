"""Public: helpers for fake (meta) functions, by op family (see :mod:`opsdk._runtime.meta`).

The names are the implementation's ``__all__``, pinned by tests/unit/test_public_api.py.
"""

from opsdk._runtime.meta import *  # noqa: F403 - this module is that public surface
from opsdk._runtime.meta import __all__  # noqa: F401
