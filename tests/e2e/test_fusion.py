"""The fusion column: an op's pattern fires, keeps results and spares a near miss, proven
offline through TorchAir GE and npugraph_ex; each planted fault fails in its own layer.

One fresh process runs every planted package's fusion cells (each package its own
namespace: patterns register once per op and process), shared by the tests below.
"""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from scaffolded import edit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from _ops import ADD_RMS_NORM_SCHEMA, fill_add_rms_norm  # noqa: E402

pytest_plugins = ["pytester"]
# pytester's runs get a home of their own: opsdk's cache is under this one
_HOME = os.environ.get("HOME", "")


def add_rms_norm(scaffolds, out, name, gamma="after"):
    """An add + RMSNorm op package with its pattern written, as `opsdk new --pattern` and a
    user make it (bench/_ops.py; ``gamma``: which side it scales on); returns the package's
    directory."""
    schema = ADD_RMS_NORM_SCHEMA.format(name=name)
    pkg = scaffolds.copy(out, name, namespace=f"f_{name}", schema=schema, pattern=True)
    return fill_add_rms_norm(pkg, name, gamma)


def _plant(pkg, name, old, new):
    edit(pkg / name / "patterns.py", old, new)


@dataclass(frozen=True)
class Plant:
    """A fault planted in an add + RMSNorm package's patterns.py: ``keywords`` added to
    its ``register(...)`` call, ``preamble`` code before it, ``search`` another search
    function registered, or ``edit`` (old, new) made elsewhere; the shape modes run; and
    the side the op scales by gamma on (``before``: a pattern of its own, which can share
    a process with the others')."""

    keywords: str = ""
    preamble: str = ""
    search: str = ""
    edit: tuple[str, str] | None = None
    shapes: tuple[str, ...] = ("static",)
    gamma: str = "after"

    def plant(self, pkg, name: str) -> None:
        if self.edit is not None:
            _plant(pkg, name, *self.edit)
        if self.keywords or self.preamble or self.search:
            call = f"register(OP, {self.search or f'{name}_search'}, {name}_replace"
            call += f", {self.keywords})" if self.keywords else ")"
            _plant(pkg, name, f"register(OP, {name}_search, {name}_replace)", self.preamble + call)


PLANTS = {
    "good": Plant(shapes=("static", "dynamic", "mark_static")),
    # the op's outputs swapped: the pattern fires, the model's numbers change
    "swapped": Plant(edit=("return out[0], out[1]", "return out[1], out[0]")),
    # the replacement passes its own eps: right for the declared eps, wrong for another
    "own_eps": Plant(edit=("out = OP(x1, x2, gamma, eps)", "out = OP(x1, x2, gamma, 1e-06)")),
    # an extra check that refuses every match: the pattern never fires
    "never": Plant(keywords="extra_check=lambda match: False"),
    # eps not matched as a keyword: the example's value is baked into the pattern
    "baked": Plant(keywords="scalars=()"),
    # a pre-traced pattern, which torch traces with literals ignored: it takes x ** 5 too
    "loose": Plant(
        keywords="search_fn_pattern=_loose",
        preamble="from torch._inductor.pattern_matcher import fwd_only, gen_pattern\n\n"
        "from opsdk._runtime.patterns import example_inputs, sentinels\n\n"
        "_loose = gen_pattern(loose_search, list(example_inputs(OP, ['eps'])[0]), fwd_only, "
        "sentinels(['eps']))\n",
    ),
    # an extra check that wants static sizes: fires in static mode, not in dynamic
    "static_only": Plant(
        keywords="extra_check=_static",
        preamble="def _static(match):\n"
        "    vals = [n.meta.get('val') for n in match.nodes]\n"
        "    return all(isinstance(d, int) for v in vals if isinstance(v, torch.Tensor) "
        "for d in v.shape)\n\n\n",
        shapes=("static", "dynamic"),
    ),
    # the same search function as `good`'s, registered for another op
    "twin": Plant(preamble="import good.patterns\n\n", search="good.patterns.good_search"),
    # an extra check that refuses float16 graphs: fires for one dtype of two
    "no_half": Plant(
        keywords="extra_check=_no_half",
        preamble="def _no_half(match):\n"
        "    vals = [n.meta.get('val') for n in match.nodes]\n"
        "    return not any(getattr(v, 'dtype', None) == torch.float16 for v in vals)\n\n\n",
        gamma="before",
    ),
}

# Processes, each a list of packages: patterns register once per process, and these
# plants all search for add + RMSNorm (one process each, or they would be duplicates);
# twin's duplicate is good's.
PROCESSES = (
    ("good", "twin", "no_half"),
    ("swapped",),
    ("own_eps",),
    ("never",),
    ("baked",),
    ("loose",),
    ("static_only",),
)

SCRIPT = """
import gc, json, sys
sys.path[:0] = {paths!r}
import importlib
import torch._dynamo.guards as guards
from torch._dynamo.utils import counters
from opsdk import harness
from opsdk.harness import graph_hook
from opsdk.report.graphs import pictures
RESULT = {{}}
TIMED = []  # Dynamo's guard-latency timings (each flushes the CPU cache), if any
timer = guards.profile_guard_manager
guards.profile_guard_manager = lambda *args: TIMED.append(args) or timer(*args)
with graph_hook.received_by(pictures.Pictures({graphs!r}, every=True)):
    for name, shapes in {runs!r}:
        module = importlib.import_module(name)
        for cell in harness.cells(module, ["fusion"], shapes):
            compiled = counters["stats"]["unique_graphs"]
            result = harness.run_cell(cell)
            compiled = counters["stats"]["unique_graphs"] - compiled
            outcome = [result.status, result.layer, result.message, compiled]
            RESULT[name + "/" + cell.shapes] = outcome
            RESULT["warnings/" + name + "/" + cell.shapes] = list(result.warnings)
        if name == "good":  # a model test's helper, no cell: it times guards as Dynamo does
            timed = len(TIMED)
            RESULT["fires"] = fires(module)
            del TIMED[timed:]
        if name == "baked":
            RESULT["fires_baked"] = baked(module)
RESULT["process/" + {runs!r}[0][0]] = {{"timed": len(TIMED), "frozen": gc.get_freeze_count()}}
print("RESULT", json.dumps(RESULT))
"""

# A team's model test: opsdk.patterns.fires on two decoder-like layers (npugraph_ex, GE
# with dynamic shapes, in bfloat16, which the specs do not declare), and on a model that
# computes something else.
FIRES = """
import torch
from opsdk.patterns import fires as count


def fires(package):
    op = package.OPS[0]
    rms = package.patterns.good_search

    def two_layers(x, r, w):
        y, h = rms(x, r, w, 1e-5)
        return rms(y, h, w, 1e-6)

    def other(x, r, w):
        return (x + r) * w + 1e-5

    x, r, w = torch.randn(4, 8).npu(), torch.randn(4, 8).npu(), torch.randn(8).npu()
    seen = {"two_layers": count(two_layers, x, r, w, op=op)}
    seen["ge"] = count(two_layers, x, r, w, op=op, backend="ge", dynamic=True)
    for name, model, args in (
        ("bf16", two_layers, [t.bfloat16() for t in (x, r, w)]),
        ("other", other, [x, r, w]),
    ):
        try:
            seen[name] = count(model, *args, op=op)
        except AssertionError as err:
            seen[name] = str(err).split("; the graph:")[0]
    return seen


def baked(package):
    op, rms = package.OPS[0], package.patterns.baked_search
    x = torch.randn(4, 8).npu()
    try:
        count(lambda x, r, w: rms(x, r, w, 1e-5), x, x, x[0], op=op)
    except AssertionError as err:
        return str(err)
"""


def _run(packages: dict, graphs) -> dict:
    """The fusion cells of ``packages`` (name -> directory) in one fresh process, every
    cell's graphs drawn under ``graphs``."""
    paths = [str(p) for p in packages.values()]
    runs = [(name, list(PLANTS[name].shapes)) for name in packages]
    code = FIRES + SCRIPT.format(paths=paths, runs=runs, graphs=str(graphs))
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stderr[-6000:]
    line = next(ln for ln in reversed(done.stdout.splitlines()) if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


@pytest.fixture(scope="module")
def fusion_results(scaffolds, tmp_path_factory):
    out = tmp_path_factory.mktemp("fusion")
    built = {}
    for name, plant in PLANTS.items():
        built[name] = add_rms_norm(scaffolds, out, name, plant.gamma)
        plant.plant(built[name], name)
    results = {"graphs": str(out / "graphs")}
    with ThreadPoolExecutor(2) as pool:  # two processes at a time: most of each is imports
        runs = [
            pool.submit(_run, {n: built[n] for n in names}, out / "graphs") for names in PROCESSES
        ]
        for run in runs:
            results |= run.result()
    return results


# The cells of correct patterns (static_only is correct where it fires).
PASSES = ("good/static", "good/dynamic", "good/mark_static", "static_only/static")


@pytest.mark.slow
@pytest.mark.parametrize("cell", PASSES)
def test_a_correct_pattern_passes(fusion_results, cell):
    assert fusion_results[cell][:2] == ["pass", None], fusion_results[cell]


@pytest.mark.slow
def test_every_dtype_is_compiled_once_for_both_backends(fusion_results):
    """One Dynamo graph, calling the search function once per dtype (float32, float16),
    serves ge and npugraph_ex; other scalars and the non-contiguous float32 case compile
    nothing (12 graphs at first; 2 with a graph per dtype; 4 when each compiles alone)."""
    for shapes in ("static", "dynamic", "mark_static"):
        assert fusion_results[f"good/{shapes}"][3] == 1, fusion_results[f"good/{shapes}"]


# Each planted fault: its cell, the layer it fails in, and what the message names.
FAULTS = {
    "changed-results": ("swapped/static", "pattern-results", "search function"),
    "own-eps": ("own_eps/static", "pattern-results", "scalars {'eps': 1.000001}"),
    "never-fires": ("never/static", "pattern-not-fired", "extra check"),
    "baked-scalar": ("baked/static", "pattern-not-fired", "a scalar baked into the pattern"),
    "near-miss": ("loose/static", "pattern-near-miss", "pow"),
    "static-only": ("static_only/dynamic", "pattern-not-fired", "dynamic shapes"),
    "duplicate": ("twin/static", "pattern-duplicate", "f_good::good"),
    "one-dtype": ("no_half/static", "pattern-not-fired", "case F16(4, 8), F16(4, 8), F16(8): "),
}


@pytest.mark.slow
@pytest.mark.parametrize(("cell", "layer", "named"), FAULTS.values(), ids=FAULTS.keys())
def test_a_planted_fault_fails_in_its_layer(fusion_results, cell, layer, named):
    status, got, message, _ = fusion_results[cell]
    assert (status, got) == ("fail", layer), message
    assert named in message, message


@pytest.mark.slow
def test_a_passing_pattern_s_cells_warn_of_nothing(fusion_results):
    """npugraph_ex's warning about rebuilt replay outputs says nothing of the op (the
    npugraph_ex column silences it too): a dynamic cell's second call rebuilt them."""
    for shapes in ("static", "dynamic", "mark_static"):
        assert fusion_results[f"warnings/good/{shapes}"] == [], shapes


@pytest.mark.slow
def test_fusion_cells_skip_guard_timing_and_their_process_settles(fusion_results):
    """No compile of a fusion cell times Dynamo's guards (a CPU cache flush each), and
    after a process's first cell its objects are frozen out of full GC passes."""
    processes = {k: v for k, v in fusion_results.items() if k.startswith("process/")}
    assert len(processes) == len(PROCESSES), processes
    for name, seen in processes.items():
        assert seen["timed"] == 0 and seen["frozen"] > 0, (name, seen)


@pytest.mark.slow
def test_the_report_draws_the_graph_before_and_after_the_pass(fusion_results):
    for name, status in (("good", "pass"), ("swapped", "fail")):
        assert fusion_results[f"{name}/static"][0] == status
        folder = Path(fusion_results["graphs"]) / f"f_{name}.{name}.default" / "fusion-static"
        before, after = ((folder / f"{k}.svg").read_text() for k in ("fx_before", "fx"))
        # the unfused add + RMSNorm before, the op in its place after
        assert "rsqrt" in before and f"f_{name}.{name}" not in before
        assert f"f_{name}.{name}" in after and "rsqrt" not in after


@pytest.mark.slow
def test_fires_counts_the_fusions_in_a_models_graph_or_says_why_not(fusion_results):
    seen = fusion_results["fires"]
    assert (seen["two_layers"], seen["ge"]) == (2, 2), seen
    # torch re-traces a match at the graph's own dtypes: the float16 trace's casts stand
    # for bfloat16's (a float32 trace has none, and a float16 model's would not match)
    assert seen["bf16"] == 2, seen
    assert seen["other"].startswith("the pattern of f_good::good did not fire: ")


@pytest.mark.slow
def test_fires_says_a_baked_scalar_stops_the_model_s_compile(fusion_results):
    seen = fusion_results["fires_baked"]
    assert seen.startswith("the pattern of f_baked::baked stops the model's compile: "), seen
    assert "a scalar baked into the pattern" in seen, seen


@pytest.mark.slow
def test_new_with_pattern_fuses_the_add_and_asks_for_a_search_function(opsdk_cli, tmp_path):
    assert opsdk_cli("new", "padd", "--pattern", "--namespace", "nf_padd").code == 0
    schema = "pmul(Tensor x, Tensor y, float alpha) -> Tensor"
    added = opsdk_cli("new", "pmul", "--into", "padd", "--pattern", "--schema", schema)
    assert added.code == 0, added.stderr
    pkg = tmp_path / "padd"
    for patterns_py in (pkg / "padd" / "patterns.py", pkg / "padd" / "pmul" / "patterns.py"):
        assert "register(OP, " in patterns_py.read_text()
    lint = subprocess.run(["ruff", "check", "--quiet", str(pkg)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    run = opsdk_cli("check", pkg, "--backend", "fusion", json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    assert [c["status"] for c in run.cells(op="nf_padd::padd")] == ["pass"] * 3
    pmul = run.cells(op="nf_padd::pmul")
    assert [(c["status"], c["layer"]) for c in pmul] == [("fail", "eager")] * 3
    assert "implement me: pmul_search()" in pmul[0]["message"]
    assert "torch_npu's built-in patterns are off" in run.report["environment"]["fusion_patterns"]


def test_pattern_goes_with_from_cann_and_attach_and_is_recorded(scaffolds, tmp_path):
    from opsdk.scaffold import NewRequest, into, new

    reg_op = tmp_path / "scale_add.txt"
    reg_op.write_text(
        "REG_OP(ScaleAdd)\n"
        "    .INPUT(x, TensorType({DT_FLOAT, DT_FLOAT16}))\n"
        "    .INPUT(y, TensorType({DT_FLOAT, DT_FLOAT16}))\n"
        "    .OUTPUT(z, TensorType({DT_FLOAT, DT_FLOAT16}))\n"
        "    .ATTR(alpha, Float, 1.0)\n"
        "    .OP_END_FACTORY_REG(ScaleAdd)\n"
    )
    cann = new(NewRequest("scale_add", out=tmp_path, from_cann=reg_op, pattern=True)).path
    attached = scaffolds.copy(
        tmp_path / "a",
        "npu_fuse_scale",
        namespace="npu",
        attach=True,
        pattern=True,
        schema="npu_fuse_scale(Tensor self, float scale=1.0) -> Tensor",
    )
    for package, op in ((cann, "scale_add"), (attached, "npu_fuse_scale")):
        text = (package / op / "patterns.py").read_text()
        assert f"register(OP, {op}_search, {op}_replace)" in text
        assert "is matched whatever the value" in text  # the float, by name
        assert "\nfrom . import patterns" in (package / op / "__init__.py").read_text()
        assert "pattern = true" in (package / "pyproject.toml").read_text()
    fresh = into.regenerate(cann, tmp_path / "again")
    assert (fresh / "scale_add" / "patterns.py").read_text() == (
        cann / "scale_add" / "patterns.py"
    ).read_text()


def test_pattern_for_an_in_place_op_is_refused_and_nothing_written(opsdk_cli, tmp_path):
    run = opsdk_cli("new", "pin", "--inplace", "--pattern")
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "--pattern" in run.stderr and "functional schema" in run.stderr
    assert not (tmp_path / "pin").exists()


# A team's model tests with the plugin's fixture: two layers fused under npugraph_ex and GE;
# a model that computes something else; one layer where the test expects two.
MODEL_TESTS = """
import torch

import mfuse
from mfuse.patterns import mfuse_search

OP = mfuse.OPS[0]


def two_layers(x, r, w):
    y, h = mfuse_search(x, r, w, 1e-5)
    return mfuse_search(y, h, w, 1e-6)


def inputs():
    return torch.randn(4, 8).npu(), torch.randn(4, 8).npu(), torch.randn(8).npu()


def test_two_layers_fuse(opsdk_fuses):
    assert opsdk_fuses(two_layers, *inputs(), op=OP, times=2) == {"npugraph_ex": 2, "ge": 2}


def test_other_model(opsdk_fuses):
    opsdk_fuses(lambda x, r, w: (x + r) * w + 1e-5, *inputs(), op=OP)


def test_one_layer_for_two(opsdk_fuses):
    opsdk_fuses(lambda x, r, w: mfuse_search(x, r, w, 1e-5), *inputs(), op=OP, times=2)
"""


@pytest.mark.slow
def test_the_opsdk_fuses_fixture_passes_a_fused_model_and_says_why_not(
    scaffolds, pytester, monkeypatch
):
    pkg = add_rms_norm(scaffolds, pytester.path / "pkgs", "mfuse")
    monkeypatch.setenv("HOME", _HOME)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(pkg), str(REPO)]))
    pytester.makepyfile(test_model=MODEL_TESTS)
    done = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_model.py", timeout=600)
    done.assert_outcomes(passed=1, failed=2)
    out = done.stdout.str()
    assert "npugraph_ex: the pattern of f_mfuse::mfuse did not fire: " in out, out
    assert "fired 1 times in the model's graph, not 2" in out, out
    assert "Traceback" not in out and "torch/_dynamo" not in out, out
    assert "During handling" not in out, out  # the reason once, no chained exception
