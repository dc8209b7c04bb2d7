"""`opsdk new --from-cann`: a real CANN op's REG_OP in, a package that passes every column
once its reference kernel is written."""

import re

from real_ops import prototype

from opsdk.scaffold import cann


def test_real_reg_op_needs_only_the_reference(opsdk_cli, tmp_path):
    source = tmp_path / "rms_norm_proto.h"
    source.write_text(prototype("RmsNorm"))
    run = opsdk_cli("new", "rms_norm", "--from-cann", source, "--namespace", "fc_rms")
    assert run.code == 0, run.stderr
    pkg = tmp_path / "rms_norm" / "rms_norm"
    assert 'op_type="RmsNorm"' in (pkg / "ir.py").read_text()
    assert "Support(BF16(2, 4), BF16(2, 4))" in (pkg / "specs.py").read_text()
    kernels = pkg / "kernels.py"
    text, count = re.subn(
        r"raise ImplementMe\(__file__, .*\)",
        "rstd = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + epsilon)\n"
        "    return (x.float() * rstd).to(x.dtype) * gamma, rstd",
        kernels.read_text(),
    )
    assert count == 1, "only the reference is left to write"
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    run = opsdk_cli("check", tmp_path / "rms_norm", json_report=True)
    assert run.code == 0, run.stdout + run.stderr
    outcomes = {(r["backend"], r["shapes"]): r["status"] for r in run.report["results"]}
    assert set(outcomes.values()) == {"pass"} and len(outcomes) == 15, outcomes
    # Round trip: the package's exports read back as the CANN definition it came from.
    (source_op,) = cann.read(source)
    for fmt, suffix in (("reg_op", "_proto.h"), ("msopgen", ".json")):
        run = opsdk_cli("ir", tmp_path / "rms_norm", "--format", fmt, "--out", tmp_path / fmt)
        assert run.code == 0, run.stderr
        exported = cann.read(tmp_path / fmt / f"rms_norm{suffix}")
        assert exported == [source_op], fmt
