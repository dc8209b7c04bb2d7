"""`opsdk report merge`: merge the --json reports of `opsdk check --shard I/N` into one
matrix (:mod:`opsdk.report.merge`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from opsdk.cli._flags import nothing_early
from opsdk.cli._output import wrote

__all__ = ["NAME", "NEEDS_TOOLS", "add", "early", "run"]

NAME = "report"
NEEDS_TOOLS = True


def add(commands) -> argparse.ArgumentParser:
    reports = commands.add_parser(NAME, help="work with the --json reports of opsdk check")
    merge = reports.add_subparsers(dest="action", required=True).add_parser(
        "merge", help="merge shard reports (opsdk check --shard I/N --json) into one matrix"
    )
    merge.add_argument("reports", nargs="+", type=Path, help="the --json reports to merge")
    merge.add_argument("--json", type=Path, help="write the merged JSON report here")
    merge.add_argument("--report", type=Path, help="write the merged matrix as an HTML page")
    merge.add_argument("--markdown", type=Path, help="write the merged matrix as Markdown")
    return reports


early = nothing_early


def run(args: argparse.Namespace) -> int:
    from opsdk import matrix_run, report
    from opsdk.report import merge

    matrix_run.check_outputs(args)
    merged = merge.merge(args.reports)
    print(report.matrix(merged.results))
    written, unwritten = matrix_run.write_reports(
        args,
        merged.results,
        merged.target,
        merged.provenance,
        merged.environment,
        title=merged.title,
    )
    lost = wrote(args.command, written, unwritten)
    return lost or (0 if report.succeeded(merged.results) else 1)
