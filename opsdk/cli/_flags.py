"""The flag pieces several commands share, and the parser every command's is: one line
per usage error, with where the fix is (``opsdk check --help``), not argparse's usage
block."""

from __future__ import annotations

import argparse
import difflib
import math
from pathlib import Path

from opsdk.axes import GRAPH_MODES, SHAPE_MODES
from opsdk.errors import OpsdkError
from opsdk.harness.run import shard as shard_plan
from opsdk.harness.run.watch import DEFAULT_CELL_TIMEOUT
from opsdk.matrix_run import DEFAULT_TIMEOUT

__all__ = [
    "Parser",
    "Version",
    "choices_flag",
    "csv",
    "existing",
    "matrix_flags",
    "modes_flag",
    "nothing_early",
    "positive_seconds",
]


class Parser(argparse.ArgumentParser):
    """A command's parser: a usage error is one line naming the command's ``--help``;
    the long flags it has are kept, to suggest the nearest to a misspelled one."""

    def __init__(self, *args, **kwargs):
        self.flags: list[str] = []  # filled from here: the constructor adds --help
        super().__init__(*args, **kwargs)

    def add_argument(self, *names, **kwargs):
        self.flags += [n for n in names if n.startswith("--")]
        return super().add_argument(*names, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def unknown(self, arguments: list[str]):
        """A usage error for the ``arguments`` nothing took, with the nearest flag."""
        near = difflib.get_close_matches(arguments[0].split("=")[0], self.flags, n=1, cutoff=0.75)
        hint = f": did you mean {near[0]}?" if near else ""
        self.error(f"unrecognized arguments: {' '.join(arguments)}{hint}")


def nothing_early(args: argparse.Namespace) -> None:
    """``early`` of a command that has nothing to refuse before it runs."""


def existing(flag: str, path: Path | None, kind: str) -> None:
    """Refuse ``path``, given as ``flag``, unless it is there as ``kind`` (``file``,
    ``folder`` or ``file or folder``): said at once, not after a run's imports."""
    there = {"file": Path.is_file, "folder": Path.is_dir, "file or folder": Path.exists}[kind]
    if path is not None and not there(path):
        raise OpsdkError(f"{flag} {path}: no such {kind}")


def csv(choices):
    """An argparse type: a comma-separated list of ``choices``."""

    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(bad) or 'empty list'}: choose from {','.join(choices)}"
            )
        return items

    return parse


def positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return seconds


class Version(argparse.Action):
    """``--version``: the installed distribution's, read only when asked (importing
    importlib.metadata would cost every command tens of milliseconds)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from opsdk import _versions

        print(f"opsdk {_versions.opsdk_version()}")
        parser.exit()


def choices_flag(
    parser: argparse.ArgumentParser, flag: str, choices, metavar: str, what: str, aliases=()
):
    """A comma-separated list flag of ``choices``, all of them by default; ``aliases`` are
    its older spellings, still accepted."""
    parser.add_argument(
        flag,
        *aliases,
        type=csv(choices),
        default=list(choices),
        metavar=metavar,
        help=f"comma-separated {what}, any of {', '.join(choices)} (default: all)",
    )


def modes_flag(parser: argparse.ArgumentParser, what: str, default="all") -> None:
    parser.add_argument(
        "--modes",
        type=csv(GRAPH_MODES),
        default=list(GRAPH_MODES) if default == "all" else default,
        metavar="MODES",
        help=f"{what}; comma-separated, any of {', '.join(GRAPH_MODES)} (default: all)",
    )


def matrix_flags(parser: argparse.ArgumentParser) -> None:
    """The flags `opsdk check` and `opsdk audit` share."""
    choices_flag(parser, "--shapes", SHAPE_MODES, "MODES", "shape modes")
    parser.add_argument("-k", dest="pattern", help="only ops whose name contains PATTERN")
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="one progress line per op, not per cell (the matrix and findings stay)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the JSON report here")
    parser.add_argument(
        "--report",
        type=Path,
        metavar="FILE.html",
        help="write the matrix as a self-contained HTML page",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write the matrix as Markdown (also appended to $GITHUB_STEP_SUMMARY when set)",
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="run each op in its own process: a crash or hang costs only that op's cells",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help=f"with --isolate, seconds an op may run (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--cell-timeout",
        type=positive_seconds,
        default=DEFAULT_CELL_TIMEOUT,
        metavar="SECONDS",
        help="seconds a cell may run before its process is ended and the run goes on in a "
        f"new one (default {DEFAULT_CELL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="run every cell: neither read nor write the cell cache (.opsdk_cache/)",
    )
    parser.add_argument(
        "--shard",
        type=shard_plan.parse,
        metavar="I/N",
        help="run shard I of N (whole ops, balanced by recorded durations); merge the shards' "
        "--json reports with opsdk report merge",
    )
    parser.add_argument(
        "--explore",
        type=int,
        metavar="N",
        help="cases per op on which the infer checks hold the fake to the op's C++ "
        "InferShape beyond the declared ones (default 300; 0: none)",
    )
    # How --isolate runs one op in a child: the exact name, as reports spell it (ns::name).
    parser.add_argument("--only-op", help=argparse.SUPPRESS)
