"""`opsdk new`: scaffold an op package, or add an op to one (``--into``).

The rendering lives in private modules (:mod:`._render`, :mod:`._context`) and the
cookiecutter template beside them; this is what the CLI, benchmarks and tests use.
"""

from opsdk.scaffold import into
from opsdk.scaffold._render import NewRequest, NewResult, attach_target, build_spec, new

__all__ = ["NewRequest", "NewResult", "attach_target", "build_spec", "into", "new"]
