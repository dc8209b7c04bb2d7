"""`opsdk new --autograd`: a backward registered with torch.library, trained by the
eager, aot_eager and ge columns and checked by opcheck (registration and gradcheck)."""

import pytest

BACKENDS = "eager,opcheck,aot_eager,ge"


def _package(scaffolds, tmp_path, name="my_add", **kwargs):
    # Each `opsdk check` runs in its own process: tests can share the namespace.
    return scaffolds.copy(tmp_path, name, namespace="autograd_t", autograd=True, **kwargs)


@pytest.mark.parametrize("style", ["custom_op", "library"])
def test_autograd_add_trains_in_every_column(scaffolds, tmp_path, opsdk_cli, style):
    pkg = _package(scaffolds, tmp_path, style=style)
    autograd = (pkg / "my_add" / "autograd.py").read_text()
    registration = "my_add.register_autograd(" if style == "custom_op" else "register_autograd("
    assert registration in autograd and "setup_context=my_add_setup_context" in autograd
    assert "autograd = true" in (pkg / "pyproject.toml").read_text()
    dump = tmp_path / "dump"
    run = opsdk_cli(
        "check",
        pkg,
        "--backend",
        BACKENDS,
        "--shapes",
        "static,dynamic",
        "--dump",
        dump,
        json_report=True,
    )
    assert run.code == 0, run.stdout + run.stderr
    assert all(r["status"] == "pass" for r in run.report["results"])
    # AOTAutograd warns that TorchAir's backward compiler is not boxed, once per graph: the
    # warning is the ge cells', in the report and after the matrix, never amid the progress.
    boxed = "UserWarning: Your compiler for AOTAutograd is returning"  # as the terminal cuts it
    for cell in run.cells(column="ge"):
        assert [w for w in cell["warnings"] if w.startswith(boxed)], cell
    assert "Warning" not in run.stderr and run.stdout.count(boxed) == 1, run.stdout
    assert "autograd_t::my_add [ge-static] [ge-dynamic]\n  " + boxed in run.stdout
    # The ge column compiled the forward and the backward graph through TorchAir.
    static = next(dump.glob("*/ge-static"))
    fx_graphs = [p.read_text() for p in static.glob("graph*_fx.py")]
    backward = [g for g in fx_graphs if "tangents" in g]  # AOT names the backward's inputs so
    assert backward and len(backward) < len(fx_graphs), sorted(p.name for p in static.iterdir())


def test_a_wrong_backward_fails_gradcheck_in_layer_autograd(scaffolds, tmp_path, opsdk_cli):
    pkg = _package(scaffolds, tmp_path)
    path = pkg / "my_add" / "autograd.py"
    text = path.read_text()
    path.write_text(text.replace("return grad_out.sum_to_size", "return 2 * grad_out.sum_to_size"))
    run = opsdk_cli("check", pkg, "--backend", "opcheck", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "autograd"), cell
    assert "gradcheck" in cell["message"] and "autograd.py" in cell["message"]


def test_a_backward_that_fails_on_npu_tensors_fails_eager_in_layer_autograd(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(scaffolds, tmp_path)
    path = pkg / "my_add" / "autograd.py"
    text = path.read_text()
    path.write_text(
        text.replace(
            "return grad_out.sum_to_size(ctx.x_shape)",
            "return grad_out.cpu().sum_to_size(ctx.x_shape)",
        )
    )
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert cell["status"] in ("fail", "error") and cell["layer"] == "autograd", cell


def test_skeleton_backward_says_implement_me(scaffolds, tmp_path, opsdk_cli):
    schema = "my_op(Tensor x, Tensor? w, float alpha=1.0) -> (Tensor a, Tensor b)"
    pkg = _package(scaffolds, tmp_path, name="my_op", schema=schema)
    autograd = (pkg / "my_op" / "autograd.py").read_text()
    assert "def my_op_backward(ctx, grad_a, grad_b) -> tuple:" in autograd
    assert 'raise ImplementMe(\n        __file__,\n        "my_op_backward"' in autograd
    assert "ctx.save_for_backward(x, w)" in autograd
    # Write the forward (kernels, fake): the backward's implement-me is then what fails.
    for module, old, new_body in (
        (
            "kernels.py",
            'raise ImplementMe(__file__, "my_op_npu", "compute the op on npu tensors")',
            "return x * alpha, x + 1",
        ),
        (
            "kernels.py",
            'raise ImplementMe(__file__, "my_op_reference", "compute the op on CPU tensors")',
            "return x * alpha, x + 1",
        ),
        (
            "fake.py",
            'raise ImplementMe(__file__, "my_op_fake", '
            '"return empty tensors of the output shapes")',
            "return torch.empty_like(x), torch.empty_like(x)",
        ),
    ):
        path = pkg / "my_op" / module
        assert old in path.read_text(), path.read_text()
        path.write_text(path.read_text().replace(old, new_body))
    run = opsdk_cli(
        "check", pkg, "--backend", "eager,opcheck", "--shapes", "static", json_report=True
    )
    for cell in run.report["results"]:
        assert (cell["status"], cell["layer"]) == ("fail", "autograd"), cell
        assert "implement me: my_op_backward()" in cell["message"]
        assert str(pkg / "my_op" / "autograd.py") in cell["message"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--inplace"], "writes its inputs"),
        (["--schema", "my_op(Tensor(a!) x, Tensor(b!) y) -> ()"], "writes its inputs"),
        (["--schema", "my_op(Tensor x, *, Tensor y) -> Tensor"], "keyword-only tensor"),
    ],
)
def test_autograd_refuses_what_torch_cannot_differentiate(tmp_path, opsdk_cli, argv, needle):
    run = opsdk_cli("new", "my_op", "--autograd", *argv, "--out", tmp_path / "out")
    assert run.code == 2 and needle in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
