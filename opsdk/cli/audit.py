"""`opsdk audit`: check an existing op library's schemas, Meta functions and converters."""

from __future__ import annotations

import argparse
from pathlib import Path

from opsdk.audit import AUDIT_SUITE
from opsdk.cli import _matrix
from opsdk.cli._flags import csv, existing, matrix_flags
from opsdk.harness import columns
from opsdk.harness.run import target

__all__ = ["NAME", "NEEDS_TOOLS", "WHEEL", "add", "early", "run"]

NAME = "audit"
NEEDS_TOOLS = True
# The audit's target read from the torch-npu wheel, never imported.
WHEEL = "torch_npu"


def add(commands) -> argparse.ArgumentParser:
    audit = commands.add_parser(
        NAME, help="check an existing op library's schemas, Meta functions and converters"
    )
    matrix_flags(audit)
    audit.add_argument(
        "target",
        nargs="+",
        help="the op library: torch_npu (read from the torch-npu wheel), or directories or "
        "importable modules, one library of them all: opsdk packages, or modules defining "
        "ops with torch.library",
    )
    audit.add_argument(
        "--checks",
        type=csv(columns.names(AUDIT_SUITE)),
        metavar="CHECKS",
        help=f"comma-separated checks, any of {', '.join(columns.names(AUDIT_SUITE))} (default: "
        "all, each in the graph mode an op takes: converter and infer for an op with a "
        "TorchAir converter, npugraph_ex for one without)",
    )
    audit.add_argument(
        "--waivers",
        type=Path,
        metavar="FILE",
        help="known findings to report as xfail (opsdk-waivers.toml format; column = the check)",
    )
    audit.add_argument(
        "--ir",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="the GE side's CANN definitions: a REG_OP header, op_host OpDef source, msopgen "
        "JSON, or a folder of them (repeat for more; checked before the library's own)",
    )
    audit.add_argument(
        "-D",
        "--define",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="a macro a repository's C++ build sets (its #if branches read as that build's)",
    )
    return audit


def early(args: argparse.Namespace) -> None:
    """What the audit is pointed at exists (targets, ``--ir`` paths, ``--waivers``), found
    without importing torch or the targets: a mistyped name is one line at once, not
    after the seconds a run's imports take."""
    for name in args.target:
        if name != WHEEL:
            target.findable(name)
    for path in args.ir:
        existing("--ir", path, "file or folder")
    existing("--waivers", args.waivers, "file")


def run(args: argparse.Namespace) -> int:
    return _matrix.run(args)
