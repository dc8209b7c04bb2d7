"""`opsdk fetch-torchair`: download TorchAir (from the torch-npu wheel) for offline use,
repairing a corrupt cache."""

from __future__ import annotations

import argparse

from opsdk.cli._flags import nothing_early

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "fetch-torchair"
NEEDS_TOOLS = True


def add(commands) -> argparse.ArgumentParser:
    fetch = commands.add_parser(
        NAME, help="download TorchAir (from the torch-npu wheel) for offline use"
    )
    fetch.add_argument("--force", action="store_true", help="download again over the cache")
    return fetch


early = nothing_early


def run(args: argparse.Namespace) -> int:
    from opsdk._runtime import locator

    corrupt = None
    if not args.force:
        try:
            locator.verify(deep=True)
        except locator.CorruptCache as err:
            corrupt = err
    path = locator.fetch(force=args.force or corrupt is not None)
    if corrupt is not None:
        print(f"repaired the TorchAir cache (was corrupt: {corrupt.where})")
    print(f"TorchAir is ready at {path}")
    return 0
