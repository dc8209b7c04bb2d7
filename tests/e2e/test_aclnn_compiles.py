"""The aclnn header opsdk writes is valid C: compiled by the system's cc (the compiler
test of tests/unit/test_aclnn.py)."""

import shutil
import subprocess

import pytest

from opsdk._runtime.irdef import Attr, Input, IrDef, Output
from opsdk.cann import CannOp, aclnn


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_the_header_is_valid_c(tmp_path):
    """The header compiles as C, against an ``aclnn/acl_meta.h`` declaring what CANN's does."""
    (tmp_path / "aclnn").mkdir()
    (tmp_path / "aclnn" / "acl_meta.h").write_text(
        "#include <stdint.h>\ntypedef int32_t aclnnStatus;\ntypedef void *aclrtStream;\n"
        + "".join(
            f"typedef struct {t} {t};\n"
            for t in (
                "aclTensor aclTensorList aclScalar aclScalarList aclIntArray aclFloatArray "
                "aclBoolArray aclOpExecutor"
            ).split()
        )
    )
    rich = IrDef(
        "Rich",
        [Input("y"), Input("shape", value_depend=True), Input("a", scalar="scalar")],
        [Output("y"), Output("z", "dynamic")],
        [Attr("s", "VT_STRING"), Attr("f", "VT_LIST_FLOAT", (1.0,))],
    )
    source = tmp_path / "rich.h"
    source.write_text(aclnn.header(CannOp(rich, {"shape": ("DT_INT64",)})))
    done = subprocess.run(
        ["cc", "-fsyntax-only", "-Wall", "-Werror", "-x", "c", f"-I{tmp_path}", str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
