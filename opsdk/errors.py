"""Errors that reach the user as one line and a non-zero exit.

Every error opsdk raises for bad input says what is wrong and how to fix it;
the CLI prints ``str(err)`` and exits with ``err.exit_code``.
"""


class OpsdkError(Exception):
    """A user-facing failure: the message is the whole story, no traceback."""

    exit_code = 2


class SpecError(OpsdkError):
    """An op name or schema that opsdk cannot (or must not) generate from."""


class ScaffoldError(OpsdkError):
    """`opsdk new` cannot write the package (target exists, unwritable, ...)."""


class TargetError(OpsdkError):
    """`opsdk check` cannot load what it was pointed at."""


class BuildError(OpsdkError):
    """A `--style cpp` op library does not compile, or cannot be compiled here."""
