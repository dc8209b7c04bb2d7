"""What every command prints the same way: an error, one line on stderr with its exit
code, and the files a command wrote."""

from __future__ import annotations

import sys
from pathlib import Path

from opsdk.errors import OpsdkError, OutputError

__all__ = ["said", "wrote"]


def said(command: str, err: OpsdkError) -> int:
    """``err`` as the user sees it, one line on stderr; its exit code."""
    print(f"opsdk {command}: error: {err}", file=sys.stderr)
    return err.exit_code


def wrote(command: str, written: list[Path], unwritten: list[OutputError]) -> int:
    """Say which reports were written, then which the machine could not take (one line
    each); the exit code those cost (OutputError's, 3), 0 if none."""
    for path in written:
        print(f"wrote {path}")
    for err in unwritten:
        said(command, err)
    return OutputError.exit_code if unwritten else 0
