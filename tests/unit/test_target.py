"""Loading what `opsdk check` is pointed at, and saying why an op package does not import."""

import pytest

from opsdk.errors import TargetError
from opsdk.harness.run import target


def test_a_schema_torch_refuses_is_shown_with_torchs_caret(tmp_path):
    pkg = tmp_path / "tgt_bad_schema"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import torch\n"
        'LIB = torch.library.Library("tgt_bad", "FRAGMENT")\n'
        'LIB.define("f(Tensor x, *, int[] s=1) -> Tensor")\n'
    )
    with pytest.raises(TargetError) as err:
        target.load(str(pkg))
    head, text, caret = str(err.value).splitlines()
    assert head.startswith("importing tgt_bad_schema failed: RuntimeError: expected [ but found")
    assert head.endswith("`python -c 'import tgt_bad_schema'` works")
    assert text == "f(Tensor x, *, int[] s=1) -> Tensor"
    assert caret.strip() == "~ <--- HERE" and text[caret.index("~")] == "1"


def test_other_import_errors_stay_one_line(tmp_path):
    pkg = tmp_path / "tgt_bad_value"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('raise ValueError("first\\nsecond")\n')
    with pytest.raises(TargetError, match="ValueError: first; fix the package") as err:
        target.load(str(pkg))
    assert "\n" not in str(err.value)


def test_a_module_file_is_a_target_and_another_file_is_refused(tmp_path):
    (tmp_path / "tgt_one_file.py").write_text("VALUE = 7\n")
    assert target.load(str(tmp_path / "tgt_one_file.py")).VALUE == 7
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(TargetError, match="neither an op package directory nor a module's .py"):
        target.load(str(tmp_path / "notes.txt"))
