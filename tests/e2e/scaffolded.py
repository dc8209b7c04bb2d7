"""Helpers for tests that scaffold an op package and then change it as users do."""

import re

from opsdk.scaffold import NewRequest, new


def edit(path, old, new_text):
    """Replace ``old`` in the file at ``path``; it must be there."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new_text))


def implemented(tmp_path, name, schema, kernel, fake="meta.same_as(x)"):
    """A scaffolded skeleton with its kernels and fake function filled in."""
    ns = f"g_{re.sub(r'[^a-z0-9]', '', tmp_path.name)[-14:]}"
    pkg = new(NewRequest(name, namespace=ns, schema=schema, out=tmp_path)).path
    kernels = pkg / name / "kernels.py"
    text, count = re.subn(r"raise ImplementMe\(__file__, .*\)", kernel, kernels.read_text())
    assert count == 2, "expected a skeleton with an npu and a reference kernel"
    kernels.write_text(text.replace("from opsdk import ImplementMe\n", ""))
    fake_py = pkg / name / "fake.py"
    text, count = re.subn(
        r"raise ImplementMe\(__file__, .*\)", f"return {fake}", fake_py.read_text()
    )
    assert count == 1
    fake_py.write_text(text.replace("from opsdk import ImplementMe", "from opsdk import meta"))
    return pkg
