"""`opsdk check` end to end: a scaffolded op passes; each breakage is caught in its layer."""

import json

import pytest
from scaffolded import edit

BACKENDS = "eager,opcheck,aot_eager"


def _package(scaffolds, tmp_path, name="my_add", **kwargs):
    # Each `opsdk check` runs in its own process: tests can share the namespace.
    return scaffolds.copy(tmp_path, name, namespace="harness_t", **kwargs)


@pytest.mark.parametrize(("inplace", "style"), [(True, "custom_op"), (False, "library")])
def test_scaffolded_op_passes_every_cell(scaffolds, tmp_path, opsdk_cli, inplace, style):
    pkg = _package(scaffolds, tmp_path, inplace=inplace, style=style)
    # the op alone (its usage contexts: test_context_matrix.py)
    run = opsdk_cli("check", pkg, "--backend", BACKENDS, "--contexts", "none", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    results = run.report["results"]
    assert {(r["column"], r["shapes"]) for r in results} == {
        (b, s) for b in BACKENDS.split(",") for s in ("static", "dynamic", "mark_static")
    }
    assert all(r["status"] == "pass" for r in results), json.dumps(results, indent=1)
    env = run.report["environment"]
    assert env["npu"] == "emulated" and env["torch"].startswith("2.13")
    assert "9 pass" in run.stdout


def test_fake_returning_the_wrong_shape_fails_in_layer_fake(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    edit(
        pkg / "my_add" / "fake.py",
        "return meta.elementwise(x, y)",
        "return meta.elementwise(x, y)[:1]",
    )
    run = opsdk_cli("check", pkg, "--backend", "opcheck", "--shapes", "static", json_report=True)
    assert run.code == 1
    [cell] = run.cells(column="opcheck", shapes="static")
    assert (cell["status"], cell["layer"]) == ("fail", "fake")
    assert "test_faketensor" in cell["message"] and "fake.py" in cell["message"]


def test_fake_returning_the_wrong_dtype_fails_in_layer_fake(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path, style="library")
    edit(
        pkg / "my_add" / "fake.py",
        "meta.elementwise(x, y)",
        "meta.elementwise(x, y, dtype=torch.float16)",
    )
    run = opsdk_cli(
        "check", pkg, "--backend", "opcheck", "--shapes", "static,dynamic", json_report=True
    )
    assert run.code == 1
    assert {(c["status"], c["layer"]) for c in run.report["results"]} == {("fail", "fake")}


def test_fake_raising_shows_the_same_cause_and_line_in_opcheck_and_compiled_columns(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(scaffolds, tmp_path)
    edit(
        pkg / "my_add" / "fake.py",
        "    return meta.elementwise(x, y)",
        '    assert x.dim() == 5, "wants 5 dims"\n    return meta.elementwise(x, y)',
    )
    run = opsdk_cli(
        "check", pkg, "--backend", "opcheck,aot_eager", "--shapes", "static", json_report=True
    )
    assert [c["layer"] for c in run.report["results"]] == ["fake", "fake"], run.stdout
    for cell in run.report["results"]:
        assert f"{pkg / 'my_add' / 'fake.py'}:" in cell["message"], cell
        assert "(my_add_fake): AssertionError: wants 5 dims;" in cell["message"], cell


def test_kernel_computing_wrong_values_fails_in_layer_eager(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path, inplace=True)
    edit(pkg / "my_add" / "kernels.py", "    x.add_(y)\n\n\ndef", "    x.sub_(y)\n\n\ndef")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    assert run.code == 1
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "eager")
    assert "max abs err" in cell["message"] and "first at index" in cell["message"]


def test_inplace_schema_without_mutation_mark_fails_in_layer_schema(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path, inplace=True, style="library")
    edit(pkg / "my_add" / "schema.py", "Tensor(a!) x", "Tensor x")
    run = opsdk_cli("check", pkg, "--backend", "opcheck", "--shapes", "static", json_report=True)
    assert run.code == 1
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "schema"), cell
    assert "Tensor(a!)" in cell["message"]


def test_undeclared_mutation_fails_in_layer_schema(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    edit(
        pkg / "my_add" / "kernels.py",
        "    return torch.add(x, y)",
        "    x.add_(y)\n    return x.clone()",
    )
    run = opsdk_cli("check", pkg, "--backend", "opcheck", "--shapes", "static", json_report=True)
    assert run.code == 1
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "schema"), cell
    assert "test_schema" in cell["message"] and "Tensor(a!)" in cell["message"]


def test_skeleton_fails_with_implement_me_pointing_at_the_file(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(
        scaffolds, tmp_path, name="my_op", schema="my_op(Tensor x, *, float alpha=1.0) -> Tensor"
    )
    run = opsdk_cli("check", pkg, "--backend", BACKENDS, "--shapes", "static", json_report=True)
    assert run.code == 1
    for cell in run.report["results"]:
        assert cell["status"] == "fail", cell
        assert cell["message"].startswith("implement me: my_op_"), cell
        assert str(pkg / "my_op") in cell["message"]


def test_recompiling_on_a_size_change_fails_in_layer_recompile(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    # A fake function that burns the concrete size into the graph forces a recompile per size.
    edit(
        pkg / "my_add" / "fake.py",
        "return meta.elementwise(x, y)",
        "torch._check(x.shape[0] == int(x.shape[0]))\n    return meta.elementwise(x, y)",
    )
    run = opsdk_cli("check", pkg, "--backend", "aot_eager", "--shapes", "dynamic", json_report=True)
    assert run.code == 1
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "recompile"), cell


def test_bad_targets_exit_2_with_one_line(tmp_path, opsdk_cli):
    run = opsdk_cli("check", tmp_path / "nope")
    assert run.code == 2 and run.stderr.count("\n") == 1 and "op package directory" in run.stderr
    run = opsdk_cli("check", tmp_path, "--backend", "warp")
    assert run.code == 2 and "choose from" in run.stderr


def test_k_selects_ops_and_doctor_reports_the_device(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    run = opsdk_cli("check", pkg, "-k", "nothing_matches")
    assert run.code == 2 and "matches -k" in run.stderr
    run = opsdk_cli("check", pkg, "--backend", "fusion")  # no pattern: no fusion cell
    assert run.code == 2 and "has a cell in the columns asked for (fusion)" in run.stderr
    assert "opsdk new --pattern" in run.stderr and "-k None" not in run.stderr
    run = opsdk_cli("doctor")
    assert run.code == 0 and "emulated" in run.stdout and "torch" in run.stdout


def test_backend_that_cannot_run_here_is_an_error_not_a_pass(
    scaffolds, tmp_path, opsdk_cli, monkeypatch
):
    # No TorchAir in an empty cache and a wheel that does not exist: the ge cells
    # must say so, and the run must not exit 0.
    monkeypatch.setenv("OPSDK_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("OPSDK_TORCH_NPU_WHEEL", str(tmp_path / "missing.whl"))
    pkg = _package(scaffolds, tmp_path)
    run = opsdk_cli("check", pkg, "--backend", "eager,ge", "--shapes", "static", json_report=True)
    assert run.code == 1, run.stdout + run.stderr
    cells = {c["column"]: c for c in run.report["results"]}
    assert cells["eager"]["status"] == "pass"
    assert (cells["ge"]["status"], cells["ge"]["layer"]) == ("error", "setup")
    assert "missing.whl" in cells["ge"]["message"]
