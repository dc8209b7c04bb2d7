"""`opsdk new`: scaffold an op package (:mod:`opsdk.scaffold.asked` decides what the
flags ask for)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from opsdk.axes import DEFAULT_STYLE, STYLES
from opsdk.cli._flags import existing, modes_flag

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "new"
NEEDS_TOOLS = True


def add(commands) -> argparse.ArgumentParser:
    new = commands.add_parser(NAME, help="scaffold an op package")
    new.add_argument("name", nargs="?", help="op name, a Python identifier (e.g. my_add)")
    new.add_argument("--inplace", action="store_true", help="the op writes its first input")
    new.add_argument(
        "--pair",
        action="store_true",
        help="torch_npu's in-place pair: NAME_ (writes and returns its first input) and NAME",
    )
    new.add_argument(
        "--attach",
        metavar="NS::OP",
        help="attach to an op defined elsewhere (torch_npu, op-plugin, C++): register only "
        "what it lacks",
    )
    new.add_argument(
        "--updatable",
        metavar="ARG[,ARG...]",
        type=lambda text: tuple(a.strip() for a in text.split(",") if a.strip()),
        default=(),
        help="host arguments (SymInt, SymInt[]) npugraph_ex updates on replay instead of "
        "capturing a graph per value",
    )
    new.add_argument("--namespace", help="torch.library namespace (default: custom)")
    new.add_argument("--schema", help='torch schema, e.g. "my_op(Tensor x, float a=1.0) -> Tensor"')
    new.add_argument("--style", choices=STYLES, default=DEFAULT_STYLE, help="registration style")
    new.add_argument(
        "--out", type=Path, metavar="DIR", help="directory to create it in (default: .)"
    )
    new.add_argument("--force", action="store_true", help="move an existing package aside")
    new.add_argument(
        "--autograd", action="store_true", help="register a backward (register_autograd)"
    )
    new.add_argument("--into", type=Path, metavar="DIR", help="add the op to the op package in DIR")
    new.add_argument(
        "--pattern",
        action="store_true",
        help="a fusion pattern (patterns.py): the torch code the op replaces in graphs",
    )
    new.add_argument(
        "--from-cann",
        type=Path,
        metavar="FILE|DIR",
        help="the op's CANN definition (AscendC op_host OpDef .cpp, msopgen JSON or REG_OP), "
        "or an AscendC project directory (every op it defines, one package): schema, IR and "
        "specs follow it",
    )
    modes_flag(
        new,
        "the graph modes the package is made for: npugraph_ex alone writes no converter and "
        "no IR (its fake function is all npugraph_ex needs); --attach without --from-cann: "
        "npugraph_ex (no GE op type is made up for a library that may have none)",
        default=None,
    )
    new.add_argument(
        "--skip-unreadable",
        action="store_true",
        help="--from-cann DIR: leave out (with a warning each) the ops opsdk cannot make, "
        "instead of failing",
    )
    return new


def early(args: argparse.Namespace) -> None:
    existing("--from-cann", args.from_cann, "file or folder")
    existing("--into", args.into and args.into.expanduser(), "folder")  # as --into reads it


def run(args: argparse.Namespace) -> int:
    from opsdk import cann
    from opsdk.scaffold import asked

    given = asked.Asked(**{f.name: getattr(args, f.name) for f in dataclasses.fields(asked.Asked)})
    with cann.warnings_said("opsdk new"):
        plan = asked.plan(given)
        for note in plan.notes:
            print(note)
        made = plan.make()
    if plan.into is not None:
        print(f"added {made.path} to the op package {plan.into}")
        print(f"next: opsdk check {plan.into}")
        return 0
    if made.backup:
        print(f"moved the existing {made.path.name} to {made.backup}")
    print(f"created {made.path}")
    print(f"next: opsdk check {made.path}")
    return 0
