"""`--shard I/N` and `opsdk report merge`: whole ops, the same plan everywhere, balanced;
shard reports merge back into the unsharded matrix, and only reports of one run merge."""

import argparse
import importlib
import json
import random
from pathlib import Path

import pytest
from no_torch import without_torch

from opsdk import cli, matrix_run
from opsdk._runtime.spec import parse
from opsdk.errors import OpsdkError
from opsdk.harness.cell import Cell, OpUnderTest, Result
from opsdk.harness.run import shard
from opsdk.report import merge

OPS = [OpUnderTest(parse(f"myops::op{i}(Tensor x, Tensor y) -> Tensor"), "mylib") for i in range(7)]
CELLS = [Cell(op, b, s) for op in OPS for b in ("eager", "ge") for s in ("static", "dynamic")]


def _shards(count, durations=None, cells=CELLS):
    return [shard.plan(cells, i, count, durations or {}) for i in range(1, count + 1)]


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_split_whole_ops_exactly_once(count):
    shards = _shards(count)
    picked = [c for s in shards for c in s.select(CELLS)]
    assert sorted(c.id for c in picked) == sorted(c.id for c in CELLS)
    for op in OPS:
        assert len({s.index for s in shards for c in s.select(CELLS) if c.op is op}) == 1


def test_every_shard_computes_the_same_plan():
    durations = {c.id: random.Random(c.id).uniform(0.1, 5) for c in CELLS}
    plans = {json.dumps(s.ops) for s in _shards(3, durations)}
    again = {json.dumps(s.ops) for s in _shards(3, dict(reversed(durations.items())))}
    assert len(plans) == 1 and plans == again


def test_without_durations_shards_get_as_many_ops_each_as_can_be():
    counts = sorted(len(s.select(CELLS)) // 4 for s in _shards(3))
    assert counts == [2, 2, 3]


def test_recorded_durations_balance_the_shards():
    # op0 is slow: it gets a shard of its own, the six others share the other.
    durations = {c.id: (3.0 if c.op is OPS[0] else 0.5) for c in CELLS}
    loads = [sum(durations[c.id] for c in s.select(CELLS)) for s in _shards(2, durations)]
    assert sorted(loads) == [12.0, 12.0]
    # A cell never timed weighs the mean of those that were.
    partial = {c.id: 1.0 for c in CELLS if c.op is not OPS[6]}
    assert [len(s.select(CELLS)) for s in _shards(7, partial)] == [4] * 7


def test_more_shards_than_ops_is_refused_before_a_shard_is_laid_out():
    """A shard is whole ops: 8 shards of 7 ops leave one empty. --shard 1/1000000000 once
    ran 151 s at 8.1 GB laying out a billion shards; it is refused at once."""
    with pytest.raises(OpsdkError, match=r"--shard 1/8: the matrix has 7 op\(s\).*--shard 1/7"):
        shard.plan(CELLS, 1, 8, {})
    with pytest.raises(OpsdkError, match="at most 7 shards"):
        shard.plan(CELLS, 3, 100, {})


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "2", "a/b", "-1/2"])
def test_a_bad_shard_is_refused_with_the_form_it_takes(text):
    with pytest.raises(argparse.ArgumentTypeError, match="I/N with 1 <= I <= N"):
        shard.parse(text)


RUN = {
    "environment": {"torch": "2.13.0"},
    "run": {"target": "path/to/mylib"},
    "package": {"name": "mylib", "sources": "abc"},
    "versions": {"opsdk": "0.1.0", "torch": "2.13.0"},
}


def _results(cells, failing=()):
    return [
        Result(c.op.name, c.column, c.shapes, "fail" if c.id in failing else "pass", seconds=1)
        for c in cells
    ]


def _write(tmp_path, name, results, plan=None, **changes) -> str:
    payload = {**RUN, **changes, "shard": plan.to_json() if plan else None}
    payload["results"] = [r.to_json() for r in results]
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


def _shard_reports(tmp_path, count=3, failing=(), **changes):
    return [
        _write(tmp_path, f"shard-{s.index}.json", _results(s.select(CELLS), failing), s, **changes)
        for s in _shards(count)
    ]


def test_shard_reports_merge_into_the_unsharded_matrix(tmp_path):
    paths = _shard_reports(tmp_path)
    merged = merge.merge(list(reversed(paths)))
    assert merged.results == _results(CELLS)
    assert merged.provenance["package"] == RUN["package"] and merged.provenance["shard"] is None
    assert merged.target == "path/to/mylib"


def test_merge_gives_one_exit_code_and_writes_the_reports(tmp_path, capsys):
    paths = _shard_reports(tmp_path, failing={CELLS[5].id})
    out = tmp_path / "merged.json"
    code = cli.main(
        [
            "report",
            "merge",
            *map(str, paths),
            "--json",
            str(out),
            "--markdown",
            str(tmp_path / "m.md"),
        ]
    )
    assert code == 1
    merged = json.loads(out.read_text())
    assert [r["status"] for r in merged["results"]].count("fail") == 1
    assert merged["package"] == RUN["package"] and merged["environment"] == RUN["environment"]
    assert merged["run"]["target"] == "path/to/mylib"
    assert "1 fail" in capsys.readouterr().out
    (tmp_path / "passing").mkdir()
    assert cli.main(["report", "merge", *map(str, _shard_reports(tmp_path / "passing"))]) == 0


def test_merge_and_its_reports_import_no_torch(tmp_path, monkeypatch):
    """A CI merge job installs no torch: `opsdk report merge` and its three reports run
    with torch unimportable (opsdk's modules loaded anew)."""
    paths = _shard_reports(tmp_path)
    reports = ["--json", "m.json", "--markdown", "m.md", "--report", "m.html"]
    monkeypatch.chdir(tmp_path)
    with without_torch() as attempts:
        fresh = importlib.import_module("opsdk.cli")
        assert fresh.main(["report", "merge", *map(str, paths), *reports]) == 0
    assert attempts == []
    assert all((tmp_path / name).is_file() for name in ("m.json", "m.md", "m.html"))


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda t, p: p.pop(), "shard 3 of 3 missing"),
        (lambda t, p: p.append(p[0]), "are both shard 1"),
        (
            lambda t, p: p.__setitem__(0, _write(t, "x.json", [], None)),
            "some reports are shards",
        ),
        (
            lambda t, p: p.__setitem__(0, _write(t, "x.json", [], _shards(2)[0])),
            "split the matrix differently",
        ),
        (
            lambda t, p: p.__setitem__(
                0,
                _write(t, "x.json", [], _shards(3)[0], package={"name": "other", "sources": "abc"}),
            ),
            "different packages (name 'other' vs 'mylib')",
        ),
        (
            lambda t, p: p.__setitem__(
                0, _write(t, "x.json", [], _shards(3)[0], package={"name": "mylib", "sources": "d"})
            ),
            "different packages (sources 'd' vs 'abc')",
        ),
        (
            lambda t, p: p.__setitem__(
                0,
                _write(
                    t, "x.json", [], _shards(3)[0], versions={"opsdk": "0.1.0", "torch": "2.12.0"}
                ),
            ),
            "different versions (torch '2.12.0' vs '2.13.0')",
        ),
        (
            lambda t, p: p.__setitem__(0, _write(t, "x.json", [], _shards(3)[0])),
            "not the cells they planned",
        ),
        (lambda t, p: p[0].write_text('{"results": []}'), "no `opsdk check --json` report"),
        (lambda t, p: p[0].write_text("{"), "cannot read the report"),
    ],
)
def test_merge_refuses_reports_that_are_not_of_one_run(tmp_path, spoil, message):
    paths = _shard_reports(tmp_path)
    spoil(tmp_path, paths)
    with pytest.raises(OpsdkError, match=message.replace("(", r"\(").replace(")", r"\)")):
        merge.merge(paths)


def test_unsharded_reports_merge_unless_a_cell_is_in_two(tmp_path):
    eager = [c for c in CELLS if c.column == "eager"]
    ge = [c for c in CELLS if c.column == "ge"]
    a = _write(tmp_path, "a.json", _results(eager))
    b = _write(tmp_path, "b.json", _results(ge))
    assert merge.merge([a, b]).results == _results(eager) + _results(ge)
    with pytest.raises(
        OpsdkError, match=r"a.json and .*c.json both hold myops::op0\[eager-static\]"
    ):
        merge.merge([a, _write(tmp_path, "c.json", _results(eager[:1]))])


def test_a_run_returns_what_it_says_of_its_shard_and_prints_only_progress(capsys):
    """matrix_run printed the shard line itself; the CLI renders it from the outcome."""
    example = Path(__file__).resolve().parents[2] / "examples" / "custom_ops" / "my_add"
    settings = matrix_run.Settings(
        "check", str(example), columns=["eager"], shapes=["static"], shard=(1, 1)
    )
    outcome = matrix_run.execute(settings)
    assert outcome.notes == ["shard 1/1: 1 of 1 cells"]
    assert "shard" not in capsys.readouterr().out
