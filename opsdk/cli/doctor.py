"""`opsdk doctor`: the environment opsdk found. It runs with the base install (torch
alone): what the `tools` extra would add is named as absent, not required."""

from __future__ import annotations

import argparse

from opsdk import _versions
from opsdk.cli._flags import nothing_early

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "doctor"
NEEDS_TOOLS = False


def add(commands) -> argparse.ArgumentParser:
    return commands.add_parser(NAME, help="show the environment opsdk found")


early = nothing_early


def run(args: argparse.Namespace) -> int:
    """0 when what is installed works (a base install included), 1 for a corrupt
    TorchAir cache."""
    from opsdk import report
    from opsdk._runtime import locator

    for key, value in report.environment().items():
        print(f"{key:12} {value}")
    missing = _versions.missing_tools()
    if missing:
        print(
            f"{'tools':12} absent ({', '.join(missing)}): every command but doctor "
            "needs them: pip install 'opsdk[tools]'"
        )
    torchair = locator.locate()
    if not torchair.fetched:
        print("TorchAir is fetched on the first ge/npugraph_ex check, or now: opsdk fetch-torchair")
    elif torchair.mode == "offline":
        try:
            locator.verify(deep=True)
        except locator.CorruptCache as err:
            print(f"TorchAir cache: corrupt: {err.where} (fix: {locator.REPAIR})")
            return 1
        print("TorchAir cache: verified")
    return 0
