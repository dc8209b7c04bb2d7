"""The `opsdk` command's entry point (``[project.scripts]``, ``python -m opsdk``).

SIGINT and SIGTERM are held from its first moment, before the imports
(:func:`opsdk._runtime.signals.hold`): a signal while the command starts is the run's
stop (a check writes the report of cells it did not run), never a KeyboardInterrupt in
the middle of an import.
"""

from __future__ import annotations

import sys

from opsdk._runtime import signals

__all__ = ["main"]


def main() -> int:
    signals.hold()
    from opsdk import cli

    return cli.command(sys.argv[1:])
