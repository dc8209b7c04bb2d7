"""`--attach` packages made by `opsdk new` (ruff formats them, a process): pairs and attached
ops are recorded and regenerate identically."""

import pytest

from opsdk.errors import ScaffoldError
from opsdk.scaffold import NewRequest, into, new


def test_pairs_and_attached_ops_are_recorded_and_regenerate_identically(tmp_path):
    pkg = new(NewRequest("my_upd", namespace="attach_rec", pair=True, out=tmp_path / "a")).path
    schema = "npu_rec(Tensor self) -> Tensor"
    into.add(NewRequest("npu_rec", namespace="npu", schema=schema, attach=True), pkg)
    assert into.read(pkg).ops == ("my_upd", "my_upd_", "npu_rec")
    with pytest.raises(ScaffoldError, match="already has an op named my_upd"):
        into.add(NewRequest("my_upd_", schema="my_upd_(Tensor(a!) x) -> Tensor(a!)"), pkg)
    fresh = into.regenerate(pkg, tmp_path / "b")
    files = sorted(p.relative_to(pkg) for p in pkg.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert all((pkg / f).read_bytes() == (fresh / f).read_bytes() for f in files)
