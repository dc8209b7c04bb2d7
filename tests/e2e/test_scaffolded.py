"""The scaffold fixture's packages stand in for `opsdk new`: the same files, built once."""

import scaffolded
from scaffolded import Scaffolds, edit

from opsdk.scaffold import NewRequest, new


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_copy_is_what_opsdk_new_writes(tmp_path):
    copy = Scaffolds(tmp_path / "built").copy(tmp_path / "a", "my_add", namespace="fx_t")
    fresh = new(NewRequest("my_add", namespace="fx_t", out=tmp_path / "b")).path
    assert copy == tmp_path / "a" / "my_add"
    assert _tree(copy) == _tree(fresh)


def test_each_request_is_built_once_and_copies_are_independent(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(scaffolded, "new", lambda req: built.append(req) or new(req))
    scaffolds = Scaffolds(tmp_path / "built")
    a = scaffolds.copy(tmp_path / "a", "my_add", namespace="fx_t")
    b = scaffolds.copy(tmp_path / "b", "my_add", namespace="fx_t")
    assert len(built) == 1
    edit(a / "my_add" / "kernels.py", "torch.add(x, y)", "torch.sub(x, y)")
    assert _tree(b) == _tree(scaffolds.shared("my_add", namespace="fx_t")) != _tree(a)
    scaffolds.copy(tmp_path / "c", "my_add", namespace="fx_t", style="library")
    assert len(built) == 2, "another option is another package"
