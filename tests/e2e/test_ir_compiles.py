"""The REG_OP header opsdk writes compiles against the torch-npu wheel's operator_reg.h
(the compiler test of tests/unit/test_ir.py)."""

import shutil
import subprocess

import pytest

from opsdk._runtime import converters, spec
from opsdk.cann import exports


def test_reg_op_header_compiles_against_the_wheels_operator_reg(tmp_path):
    """GE's enumerators for data types (torch's ScalarType numbering would not compile:
    ``ScalarType dt=float`` is torch's 6, an int where GE wants a DataType)."""
    from opsdk._runtime import locator

    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    op = spec.parse("ns::f(Tensor x, *, ScalarType dt=float, int n=2) -> Tensor")
    ir = converters.ir_def_for(op)
    assert ir.attrs[0].default == 0  # GE's DT_FLOAT
    header = tmp_path / "f_proto.h"
    header.write_text(exports.reg_op(ir))
    assert ".ATTR(dt, Type, DT_FLOAT)" in header.read_text()
    include = locator.torch_npu_file("include/graph/operator_reg.h").parents[1]
    argv = [compiler, "-std=c++17", "-fsyntax-only", f"-I{include}", "-x", "c++", str(header)]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    header.write_text(header.read_text().replace("DT_FLOAT)", "6)"))  # torch's numbering
    assert subprocess.run(argv, capture_output=True).returncode != 0
