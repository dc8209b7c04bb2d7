"""`opsdk coverage` reads the registries; `opsdk check` fails a cell whose backend lacks a piece."""

import json

NAMESPACE = "coverage_t"  # each run is its own process: tests can share it


def _package(scaffolds, tmp_path, **kwargs):
    return scaffolds.copy(tmp_path, "my_add", namespace=NAMESPACE, **kwargs), NAMESPACE


def _cut(path, text, replacement=""):
    source = path.read_text()
    assert text in source, f"{text!r} not in {path}"
    path.write_text(source.replace(text, replacement))


def _coverage(opsdk_cli, tmp_path, *args):
    """Run `opsdk coverage ARGS --json`; return the run and its rows by op."""
    path = tmp_path / "coverage.json"
    run = opsdk_cli("coverage", *args, "--json", path)
    assert run.code == 0, run.stdout + run.stderr
    return run, {row["op"]: row for row in json.loads(path.read_text())}


def test_complete_package_is_covered_and_namespace_lists_every_op(scaffolds, tmp_path, opsdk_cli):
    pkg, ns = _package(scaffolds, tmp_path)
    # An op registered in the namespace but not declared in OPS, with nothing but a schema.
    _cut(
        pkg / "my_add" / "__init__.py",
        "OPS = (",
        "import torch\n\n"
        f'torch.library.define("{ns}::bare", "(Tensor x, Scalar s) -> Tensor")\n\nOPS = (',
    )
    run, rows = _coverage(opsdk_cli, tmp_path, pkg, "--namespace", ns)
    assert rows[f"{ns}::my_add"] == {
        "op": f"{ns}::my_add",
        "kernel": True,
        "fake": True,
        "converter": "registered",
        "ir": True,
        "specs": True,
        "why_not": "",
    }
    bare = rows[f"{ns}::bare"]
    assert (bare["kernel"], bare["fake"], bare["converter"], bare["ir"], bare["specs"]) == (
        False,
        False,
        "",
        False,
        False,
    )
    assert "scalar input: s" in bare["why_not"], bare  # TorchAir's own reason
    assert f"{ns}::bare: TorchAir cannot generate a converter" in run.stdout
    # without --namespace only the package's OPS
    assert list(_coverage(opsdk_cli, tmp_path, pkg)[1]) == [f"{ns}::my_add"]


def test_missing_pieces_show_in_the_table(scaffolds, tmp_path, opsdk_cli):
    pkg, ns = _package(scaffolds, tmp_path, style="library")
    _cut(pkg / "my_add" / "schema.py", 'LIB.impl("my_add", my_add_npu, "PrivateUse1")\n')
    _cut(pkg / "my_add" / "fake.py", "@torch.library.register_fake(OP, lib=LIB)\n")
    _cut(pkg / "my_add" / "__init__.py", 'load_converters(f"{__name__}.converter")\n')
    _cut(pkg / "my_add" / "__init__.py", ", specs")
    row = _coverage(opsdk_cli, tmp_path, pkg)[1][f"{ns}::my_add"]
    # No converter module loaded, but the IR is registered and its counts match the
    # schema: TorchAir would generate the converter itself.
    assert (row["kernel"], row["fake"], row["converter"], row["ir"], row["specs"]) == (
        False,
        False,
        "automatic",
        True,
        False,
    )


def test_missing_ir_blocks_the_automatic_converter(scaffolds, tmp_path, opsdk_cli):
    pkg, ns = _package(scaffolds, tmp_path)
    _cut(pkg / "my_add" / "ir.py", "MY_ADD_IR = register(", "MY_ADD_IR = (")
    _cut(pkg / "my_add" / "__init__.py", 'load_converters(f"{__name__}.converter")\n')
    row = _coverage(opsdk_cli, tmp_path, pkg)[1][f"{ns}::my_add"]
    assert (row["converter"], row["ir"]) == ("", False)
    assert "MyAdd" in row["why_not"], row


def test_check_fails_each_cell_naming_the_missing_piece(scaffolds, tmp_path, opsdk_cli):
    pkg, _ = _package(scaffolds, tmp_path, style="custom_op")
    _cut(pkg / "my_add" / "fake.py", "@my_add.register_fake\n")
    _cut(pkg / "my_add" / "ir.py", "MY_ADD_IR = register(", "MY_ADD_IR = (")
    run = opsdk_cli(
        "check", pkg, "--backend", "eager,opcheck,ge", "--shapes", "static", json_report=True
    )
    assert run.code == 1, run.stdout + run.stderr
    cells = {c["column"]: c for c in run.report["results"]}
    assert cells["eager"]["status"] == "pass"
    assert (cells["opcheck"]["status"], cells["opcheck"]["layer"]) == ("fail", "fake")
    assert "no fake function" in cells["opcheck"]["message"]
    assert "fake.py" in cells["opcheck"]["message"]
    assert (cells["ge"]["status"], cells["ge"]["layer"]) == ("fail", "fake")


def test_check_names_a_missing_npu_kernel_and_ir(scaffolds, tmp_path, opsdk_cli):
    pkg, _ = _package(scaffolds, tmp_path, style="library")
    _cut(pkg / "my_add" / "schema.py", 'LIB.impl("my_add", my_add_npu, "PrivateUse1")\n')
    _cut(pkg / "my_add" / "ir.py", "MY_ADD_IR = register(", "MY_ADD_IR = (")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["status"], cell["layer"]) == (1, "fail", "eager"), cell
    assert "no PrivateUse1 (npu) kernel" in cell["message"] and "schema.py" in cell["message"]

    # Put the kernel back: now ge stops at the IR.
    _cut(
        pkg / "my_add" / "schema.py",
        'LIB.impl("my_add", my_add_reference, "CPU")',
        'LIB.impl("my_add", my_add_npu, "PrivateUse1")\n'
        'LIB.impl("my_add", my_add_reference, "CPU")',
    )
    run = opsdk_cli("check", pkg, "--backend", "ge", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (cell["status"], cell["layer"]) == ("fail", "converter"), cell
    assert "no GE IR definition" in cell["message"] and "ir.py" in cell["message"]


def test_coverage_of_an_unknown_namespace_is_one_line_exit_2(scaffolds, tmp_path, opsdk_cli):
    pkg, _ = _package(scaffolds, tmp_path)
    run = opsdk_cli("coverage", pkg, "--namespace", "nonesuch")
    assert run.code == 2 and run.stderr.count("\n") == 1 and "nonesuch" in run.stderr
