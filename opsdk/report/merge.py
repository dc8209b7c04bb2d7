"""`opsdk report merge A.json B.json ...`: shard reports as one matrix, with one verdict.

Each `opsdk check --json` report records its package (name and the digest of its
sources), the versions it ran with and, under ``--shard I/N``, the shard plan
(:mod:`opsdk.harness.run.shard`). Reports merge only when they agree on all of them: shards
of one commit, run with one opsdk, torch and TorchAir, that planned alike; together
they must hold every cell of the plan exactly once, and the merged results are in the
order an unsharded run gives them. Reports without a shard plan (say, one per backend)
merge when no cell appears twice.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from opsdk.errors import OpsdkError
from opsdk.harness.cell import OpUnderTest, Result
from opsdk.harness.run import fingerprint
from opsdk.harness.run.shard import Shard
from opsdk.report import CHECK_TITLE

__all__ = ["Merged", "merge", "provenance"]


def provenance(package: ModuleType, ops: list[OpUnderTest], shard: Shard | None) -> dict:
    """What a report records so that only reports of one run are merged."""
    sources = fingerprint.op_sources(package, ops)
    digest = hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()
    return {
        "package": {"name": package.__name__, "sources": digest},
        "versions": fingerprint.versions(),
        "shard": shard.to_json() if shard else None,
    }


class Merged(NamedTuple):
    """The merged results, the environment they ran in, their provenance (without a shard)
    and the target and title the first report names."""

    results: list[Result]
    environment: dict
    provenance: dict
    target: str
    title: str


def _load(path: Path) -> dict:
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise OpsdkError(f"cannot read the report {path}: {err}") from None
    if not isinstance(report, dict) or not {"package", "versions", "results"} <= set(report):
        raise OpsdkError(
            f"{path} is no `opsdk check --json` report with a package and versions: "
            "write it again with this opsdk"
        )
    shard = report.get("shard")
    if shard is not None and not (
        isinstance(shard, dict) and {"index", "count", "ops", "cells"} <= set(shard)
    ):
        raise OpsdkError(f"{path}: its shard plan does not read back: write it again")
    return report


def _agree(reports: list[tuple[Path, dict]], key: str, what: str) -> None:
    (first, expected), *rest = ((p, r[key]) for p, r in reports)
    for path, value in rest:
        if value != expected:
            differs = sorted(k for k in {*expected, *value} if expected.get(k) != value.get(k))
            detail = ", ".join(f"{k} {expected.get(k)!r} vs {value.get(k)!r}" for k in differs)
            raise OpsdkError(
                f"{first} and {path} are reports of {what} ({detail}): merge the reports of one run"
            )


def _results(path: Path, report: dict) -> list[Result]:
    try:
        return [Result.from_json(r) for r in report["results"]]
    except (TypeError, ValueError) as err:
        raise OpsdkError(f"{path}: a result does not read back ({err})") from None


def _sharded(reports: list[tuple[Path, dict]]) -> list[Result]:
    """The shards' results in the plan's cell order, once every shard is there."""
    plans = [(p, r["shard"]) for p, r in reports]
    first, plan = plans[0]
    for path, other in plans:
        if any(other.get(k) != plan.get(k) for k in ("count", "ops", "cells")):
            raise OpsdkError(
                f"{first} and {path} split the matrix differently (their cell caches, which "
                "balance the shards, differed): give every shard the same .opsdk_cache, or none"
            )
    by_index: dict[int, Path] = {}
    for path, other in plans:
        if other["index"] in by_index:
            raise OpsdkError(
                f"{by_index[other['index']]} and {path} are both shard {other['index']}"
            )
        by_index[other["index"]] = path
    missing = [str(i) for i in range(1, plan["count"] + 1) if i not in by_index]
    if missing:
        raise OpsdkError(
            f"shard {', '.join(missing)} of {plan['count']} missing: pass every shard's report"
        )
    found: dict[str, Result] = {}
    for path, report in reports:
        for result in _results(path, report):
            if plan["ops"].get(result.op) != report["shard"]["index"]:
                raise OpsdkError(f"{path} holds {result.id}, which its shard does not plan")
            found[result.id] = result
    if sorted(found) != sorted(plan["cells"]):
        raise OpsdkError(
            "the shards' cells are not the cells they planned: run every shard with the "
            "same -k, --column and --shapes"
        )
    return [found[c] for c in plan["cells"]]


def merge(paths: list[Path]) -> Merged:
    """The reports at ``paths`` as one run; refuses reports that are not of one run."""
    reports = [(Path(p), _load(p)) for p in paths]
    _agree(reports, "package", "different packages")
    _agree(reports, "versions", "different versions")
    shards = [r.get("shard") is not None for _, r in reports]
    if any(shards) and not all(shards):
        raise OpsdkError("some reports are shards (--shard I/N) and some are not: merge one kind")
    if all(shards):
        results = _sharded(reports)
    else:
        results, seen = [], {}
        for path, report in reports:
            for result in _results(path, report):
                if result.id in seen:
                    raise OpsdkError(f"{seen[result.id]} and {path} both hold {result.id}")
                seen[result.id] = path
                results.append(result)
    first = reports[0][1]
    provenance = {"package": first["package"], "versions": first["versions"], "shard": None}
    run = first.get("run") or {}
    target = run.get("target") or first["package"]["name"]
    return Merged(results, first["environment"], provenance, target, run.get("title", CHECK_TITLE))
