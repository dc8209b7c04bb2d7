"""Public: input specs, the inputs an op supports (``declare_supported`` in ``specs.py``).

The names are the implementation's ``__all__``, pinned by tests/unit/test_public_api.py.
"""

from opsdk._runtime.inputs import *  # noqa: F403 - this module is that public surface
from opsdk._runtime.inputs import __all__  # noqa: F401
