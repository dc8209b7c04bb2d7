"""What `opsdk check` and `opsdk audit` share beyond their flags: one run
(:mod:`opsdk.matrix_run`), its summary and the reports it wrote."""

from __future__ import annotations

import argparse
import os

from opsdk.cli._output import wrote

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """The run ``args`` ask for; its exit code: 0 when every cell passed, 1 when one
    failed, a stopped run's, or 3 when a report could not be written."""
    from opsdk import matrix_run, report
    from opsdk.cann import explore
    from opsdk.harness.run import interrupts

    if args.explore is not None:  # children (--isolate) inherit it
        os.environ[explore.ENV] = str(args.explore)
    outcome = matrix_run.execute(matrix_run.Settings.from_args(args))
    for note in outcome.notes:
        print(note)
    print(outcome.summary)
    lost = wrote(args.command, outcome.written, outcome.unwritten)
    if outcome.interrupted:
        return interrupts.EXIT_CODE
    return lost or (0 if report.succeeded(outcome.results) else 1)
