"""Input specs end to end: what the cases they derive catch (in-process tests of the
spec API and the case generation are in tests/unit/test_inputs.py)."""



SPECS_PY = """
import torch
from opsdk.runtime.inputs import F16, F32, Support, declare_supported

declare_supported(
    torch.ops.{ns}.my_add.default,
    [Support(F32(2, 3), F32(2, 3)), Support(F16(2, 3), F16(2, 3))],{extra}
)
"""


def _package(scaffolds, tmp_path, kernel: str, extra: str = ""):
    ns = "specs_t"  # each `opsdk check` runs in its own process: tests can share it
    pkg = scaffolds.copy(tmp_path, "my_add", namespace=ns)
    (pkg / "my_add" / "specs.py").write_text(SPECS_PY.format(ns=ns, extra=extra))
    kernels = pkg / "my_add" / "kernels.py"
    text = kernels.read_text()
    old = "    return torch.add(x, y).contiguous()"
    assert old in text
    kernels.write_text(text.replace(old, kernel))
    return pkg


def test_tolerance_override_is_applied(scaffolds, tmp_path, opsdk_cli):
    off = "    return torch.add(x, y) + 1e-3"
    strict = _package(scaffolds, tmp_path / "strict", off)
    run = opsdk_cli("check", strict, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["status"], cell["layer"]) == (1, "fail", "eager"), cell
    assert "case F32(2, 3), F32(2, 3): call 0: output" in cell["message"]

    loose = _package(
        scaffolds,
        tmp_path / "loose",
        off,
        extra="\n    tolerances={torch.float32: (0.0, 2e-3), torch.float16: (0.0, 2e-2)},",
    )
    run = opsdk_cli("check", loose, "--backend", "eager", "--shapes", "static", json_report=True)
    assert run.code == 0, run.stdout + run.stderr


def test_a_kernel_wrong_for_one_declared_dtype_fails_naming_the_case(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(
        scaffolds,
        tmp_path,
        "    return torch.sub(x, y) if x.dtype == torch.float16 else torch.add(x, y)",
    )
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case F16(2, 3), F16(2, 3): call 0: output")


def test_non_contiguous_case_catches_a_kernel_that_assumes_contiguous_memory(
    scaffolds, tmp_path, opsdk_cli
):
    pkg = _package(scaffolds, tmp_path, "    return (x.view(-1) + y.view(-1)).view(x.shape)")
    run = opsdk_cli("check", pkg, "--backend", "eager", "--shapes", "static", json_report=True)
    [cell] = run.report["results"]
    assert (run.code, cell["layer"]) == (1, "eager"), cell
    assert cell["message"].startswith("case non-contiguous F32(2, 3), F32(2, 3): ")
    assert "view" in cell["message"]

