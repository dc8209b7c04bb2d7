"""The `opsdk` command: one module per command, assembled here.

A command module (:class:`Command`) adds its parser (``add``) and carries it out
(``run``): it parses and prints, and the work is in the layers below it. Its top
level imports nothing heavy: ``--help``, ``--version`` and ``doctor`` import no torch,
so what a command runs is imported in its ``run``. This module builds the whole
parser from :data:`COMMANDS` (:func:`parser`), maps errors to exit codes
(:func:`main`), and starts the watched run of a check or audit (:func:`command`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Protocol

from opsdk import _streams, _versions
from opsdk.cli import audit, check, coverage, doctor, fetch_torchair, graph, ir, new, report
from opsdk.cli._flags import Parser, Version
from opsdk.cli._output import said
from opsdk.errors import OpsdkError

__all__ = ["COMMANDS", "Command", "command", "main", "parser"]


class Command(Protocol):
    """What a command module defines."""

    NAME: str  # as typed: `opsdk NAME`
    NEEDS_TOOLS: bool  # whether it needs opsdk's `tools` extra (all but doctor)

    def add(self, commands) -> argparse.ArgumentParser:
        """Add its parser to ``commands`` (argparse's subparsers) and return it."""

    def early(self, args: argparse.Namespace) -> None:
        """Refuse what can be refused without heavy imports (a target that does not
        exist, a package that declares no ops): before a watched run starts its child."""

    def run(self, args: argparse.Namespace) -> int:
        """Carry out ``args``; the exit code (an :class:`OpsdkError` is mapped by main)."""


# In the order `opsdk --help` lists them.
COMMANDS: dict[str, Command] = {
    c.NAME: c for c in (new, check, graph, audit, coverage, fetch_torchair, ir, report, doctor)
}


def parser() -> Parser:
    """The whole command line (documented: the guides' tests read it)."""
    return _parsers()[0]


def _parsers() -> tuple[Parser, dict[str, Parser]]:
    """The command line and each command's parser, by name."""
    top = Parser(
        prog="opsdk", description="Scaffold Ascend NPU custom ops and prove they enter the graph."
    )
    top.add_argument("--version", action=Version, help="print opsdk's version and exit")
    subs = top.add_subparsers(dest="command", required=True)
    return top, {name: _ours(c.add(subs)) for name, c in COMMANDS.items()}


def _ours(parser: argparse.ArgumentParser) -> Parser:
    """A command's parser, made by the subparsers of a :class:`Parser` (argparse makes
    them of the top parser's class)."""
    if not isinstance(parser, Parser):
        raise TypeError(f"{parser.prog}: a command's add() must use the subparsers it is given")
    return parser


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; an argument nothing took is a usage error of its command, naming
    that command's nearest flag."""
    top, commands = _parsers()
    args, unknown = top.parse_known_args(argv)
    if unknown:
        commands[args.command].unknown(unknown)
    return args


def _require_tools() -> None:
    """An install of the light runtime alone gets one line naming the extra, not a traceback."""
    missing = _versions.missing_tools()
    if missing:
        raise OpsdkError(
            f"needs opsdk's tools ({', '.join(missing)} missing): pip install 'opsdk[tools]'"
        )


def _early(args: argparse.Namespace) -> None:
    """What ``args`` ask for refused before any heavy import: the tools missing, then
    the command's own refusals."""
    chosen = COMMANDS[args.command]
    if chosen.NEEDS_TOOLS:
        _require_tools()
    chosen.early(args)


@_streams.kept
def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        _early(args)
        return COMMANDS[args.command].run(args)
    except OpsdkError as err:
        return said(args.command, err)
    except KeyboardInterrupt:  # Ctrl-C outside a check's cells: no traceback for that
        from opsdk.harness.run.interrupts import EXIT_CODE

        print(f"opsdk {args.command}: interrupted", file=sys.stderr)
        return EXIT_CODE


def command(argv: list[str]) -> int:
    """The `opsdk` command (:mod:`opsdk.console`, signals held since it started): a plain
    check or audit runs watched, in a child that a crash, a hang or an exhausted memory
    costs one cell (:mod:`opsdk.harness.run.watch`); a check or audit takes the held
    signals over (:class:`opsdk.harness.run.interrupts.Interrupts`); every other command
    gets Python's handlers back and runs as ``main`` called from Python does."""
    import signal

    from opsdk._runtime import signals
    from opsdk.harness.run import interrupts, watch

    args = _parse(argv)
    if watch.wanted(args):
        try:
            _early(args)
        except OpsdkError as err:
            return said(args.command, err)
        return watch.command(argv, args.cell_timeout)
    if args.command not in ("check", "audit"):
        signals.install(signal.SIGINT, signal.default_int_handler)
        signals.install(signal.SIGTERM, signal.SIG_DFL)
        if signals.take_held():
            return interrupts.EXIT_CODE
    return main(argv)
